// The probes kvbe-cli runs: one line each in probe_registry.cpp. What each one is and what it
// can be asked is its entry in the probe catalog (kvbe/probe/probe_catalog.h); the `probe`
// subcommands are built from the two together (probe_command.cpp).
#pragma once

#include "kvbe/probes/probe.h"

#include <memory>
#include <vector>

namespace kvbe::cli {

// Every probe with its default settings, in the catalog's order.
std::vector<std::unique_ptr<probes::Probe>> registeredProbes();

} // namespace kvbe::cli
