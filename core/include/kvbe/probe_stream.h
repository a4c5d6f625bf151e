// Deprecated: the probe protocol's home is kvbe/probe_protocol.h. This header stays only while
// ui/ still includes it; include kvbe/probe_protocol.h in new code.
#pragma once

#include "kvbe/probe_protocol.h"
