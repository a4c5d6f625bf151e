#include "kvbe/probes/probe.h"
#include "kvbe/scenario/scenario.h"
