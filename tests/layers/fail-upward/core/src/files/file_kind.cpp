#include "kvbe/trace/trace.h"
