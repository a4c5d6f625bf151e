#include "kvbe/probes/nvme_probe.h"
#include "kvbe/ui/widgets/ask.h"
