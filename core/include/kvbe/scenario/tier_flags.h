// The --tier and --amplification flags of every command that evaluates a scenario (calc, trace,
// published, probe serving; kvbe/scenario/scenario_flags.h): one grammar.
//
//   --tier KEY[×AMP]                                a tier of the scenario (by name or preset
//                                                   key), or a tier preset the scenario lacks
//   --tier KEY[×AMP]=CAPACITY                       the same, holding CAPACITY
//   --tier NAME=GBPS[@FIXED_MS][×AMP][:CAPACITY]    a custom tier: GB/s, a fixed cost in ms per
//                                                   hit, amplification, capacity
//
// After '=', a value with a byte unit (512GiB, 8TB), "blocks" (6000blocks), "tokens"
// (3e6tokens), "unlimited" or a bare 0 is a capacity; a bare number (13.5, or 13.5GB/s), with an
// optional @ms, ×amp and :capacity, is a bandwidth. 'x' may stand for '×'. Capacities matter to
// trace replay and sweep; the other commands take them and leave them unused.
//
// The tiers named replace the scenario's: its tiers that are named keep the scenario's order
// (fastest first), and the tiers added (presets it lacks, custom tiers) follow in the order given.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace kvbe {

// One --tier value, read but not yet matched against the scenario and the presets.
struct TierFlag {
    std::string text;                    // as typed, for messages
    std::string name;                    // before '=' (with any ×AMP still on it for a named tier)
    std::optional<double> bandwidthGBps; // set for a custom tier
    double tFixedMs = 0;
    std::optional<double> amplification; // after the value of a custom tier
    std::optional<Capacity> capacity;
};
Result<TierFlag> parseTierFlag(const std::string& text);

// The scenario's tiers after the --tier flags, each with the capacity its flag gave (none: no
// capacity named, which a replay reads as unlimited).
struct FlaggedTiers {
    std::vector<TierConfig> tiers;
    std::vector<std::optional<Capacity>> capacities; // one per tier
};
Result<FlaggedTiers> applyTierFlags(const std::vector<TierConfig>& scenarioTiers,
                                    const std::vector<std::string>& flags, const Presets& presets);

// --amplification AMP (every tier) or NAME=AMP (the tier of that name or preset key).
Status applyAmplification(const std::string& text, std::vector<TierConfig>& tiers);

} // namespace kvbe
