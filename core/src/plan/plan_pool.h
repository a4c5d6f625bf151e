// A fleet plan's pooled placement (docs/workload-model.md, "Pooled tiers in a plan"): the
// configuration's last tier in one pool for the fleet, reached over each node's link. Internal to
// kvbe_core.
#pragma once

#include "kvbe/plan/plan.h"

#include <string>

namespace kvbe::plan_detail {

// The link preset point p's pool is reached by (nullptr: p is local).
const SimTier* linkOf(const PlanSetup& s, const PlanPoint& p);

// Puts point p's pooled tier (c.tiers.back(), already at the pool's size and, for drives, the
// pool's bandwidth) in one pool behind p's link: each node reads it over its link (the link's
// bandwidth, and the larger of the two fixed costs on the plan's model: each counts the lookup
// and the scheduler's step), and a pool of drives carries every node's reads at most at its
// drives' bandwidth together. Its writes come over the links: at most their write bandwidth
// together, and a pool of drives' at most theirs. A local point is left as it is.
void poolTier(const PlanSetup& s, const PlanPoint& p, ReplayConfig& c);

// The capital cost of point p's tiers and links (dramUsd, drivesUsd, linksUsd, capexUsd): a
// local tier for every node, a pooled one once, a link for every node.
void pricePoint(const PlanSetup& s, PlanPoint& p);

// A pooled point's pool: "a pool of 16 x nvme-gen5-mu", "a pool of 2 TiB DRAM" ("" if local).
std::string poolText(const PlanPoint& p);

// A pooled point's sizes in words: "a pool of 16 x nvme-gen5-mu over net-400g links",
// "512 GiB DRAM + a pool of ...". Empty for a local point.
std::string pooledWords(const PlanPoint& p);

} // namespace kvbe::plan_detail
