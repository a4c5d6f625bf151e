#include "plan_pool.h"

#include "plan_text.h"

#include <algorithm>

namespace kvbe::plan_detail {

const SimTier* linkOf(const PlanSetup& s, const PlanPoint& p) {
    if (!p.pooled()) return nullptr;
    for (const auto& l : s.links)
        if (l.name == p.link) return &l;
    return nullptr;
}

void poolTier(const PlanSetup& s, const PlanPoint& p, ReplayConfig& c) {
    const SimTier* link = linkOf(s, p);
    if (!link || c.tiers.empty()) return;
    SimTier& t = c.tiers.back();
    // A pool of drives reads at most its drives' bandwidth for every node together; a DRAM
    // pool is limited by the nodes' links alone (its memory is not what carries the reads).
    const double poolBps = p.dramPooled() ? 0 : t.path.bandwidthBps;
    // The pool's writes come over every node's link: at most the links' write bandwidth
    // together (the replay adds them up for the nodes of its servers, so a search's every count
    // gets its own), and for drives at most theirs (the DRAM preset's is a host's path to its
    // GPU, not a pool's).
    if (p.dramPooled()) t.writeBps = 0;
    // The transfer is the link's (its bandwidth and the bytes it moves a useful byte).
    t.path.bandwidthBps = link->path.bandwidthBps;
    t.path.amplification = link->path.amplification;
    // The larger of the two fixed costs on this model (each counts the lookup and the
    // scheduler's step, so they are not added).
    if (s.cost->tFixed(link->path) >= s.cost->tFixed(t.path)) {
        t.path.tFixedS = link->path.tFixedS;
        t.path.tLayerS = link->path.tLayerS;
    }
    c.fleet.pooled.assign(c.tiers.size(), false);
    c.fleet.poolBps.assign(c.tiers.size(), 0.0);
    c.fleet.pooled.back() = true;
    c.fleet.poolBps.back() = poolBps;
    c.fleet.poolLinkWriteBps.assign(c.tiers.size(), 0.0);
    c.fleet.poolLinkWriteBps.back() = link->writeBps;
}

void pricePoint(const PlanSetup& s, PlanPoint& p) {
    // A fleet's point bought for the nodes of its searched count where it has one.
    p.nodes = !s.base.isFleet() ? 0
              : p.serversAtSlo  ? fleetNodes(*p.serversAtSlo, s.base.fleet.nodeServers)
                                : planNodes(s);
    const double nodes = std::max(1, p.nodes);
    p.dramUsd = p.drivesUsd = p.linksUsd = 0;
    // A local tier is bought for every node, the pool once.
    const double dramCopies = p.dramPooled() ? 1 : nodes;
    const double driveCopies = p.pooled() ? 1 : nodes;
    if (p.dramBytes > 0)
        p.dramUsd = p.dramBytes / double(1ull << 30) * s.prices.dramPerGiB->usd * dramCopies;
    if (p.drives > 0)
        p.drivesUsd = static_cast<double>(p.drives) * s.prices.drive.at(p.drive).usd * driveCopies;
    if (p.pooled()) p.linksUsd = s.prices.link.at(p.link).usd * nodes;
    p.capexUsd = p.dramUsd + p.drivesUsd + p.linksUsd;
}

std::string poolText(const PlanPoint& p) {
    if (!p.pooled()) return "";
    return "a pool of " + (p.dramPooled() ? gib(p.dramBytes) + " DRAM"
                                          : std::to_string(p.drives) + " x " + p.drive);
}

std::string pooledWords(const PlanPoint& p) {
    if (!p.pooled()) return "";
    const bool localDram = !p.dramPooled() && p.dramBytes > 0;
    return (localDram ? gib(p.dramBytes) + " DRAM + " : std::string()) + poolText(p) + " over " +
           p.link + " links";
}

} // namespace kvbe::plan_detail
