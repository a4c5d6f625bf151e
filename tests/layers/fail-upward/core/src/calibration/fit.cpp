#include "kvbe/trace/trace.h"
#include "trace_cache.h"
#include "kvbe/ui/charts/chart_view.h"
