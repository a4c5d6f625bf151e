#include "kvbe/trace/trace.h"
#include "kvbe/ui/charts/chart_view.h"
#include "trace_cache.h"
