#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/window/wrap_box.h"
#include <kvbe/probes/probe.h>
