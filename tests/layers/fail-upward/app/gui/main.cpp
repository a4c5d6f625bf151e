#include "kvbe/probes/stream.h"
