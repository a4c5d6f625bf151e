#include "kvbe/scenario/scenario.h"

#include "trace_cache.h"
