#include "kvbe/probes/probe.h"
