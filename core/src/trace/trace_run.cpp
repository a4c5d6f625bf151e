#include "kvbe/trace/trace_run.h"

#include <atomic>
#include <thread>

namespace kvbe {

Result<ReplayRun> runReplay(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
                            const std::function<bool(double)>& progress) {
    std::atomic<bool> stop{false};
    std::optional<Result<ReplayResult>> storeAll;
    std::thread side;
    if (config.storeAfter > 1) {
        side = std::thread([&] {
            ReplayConfig all = config;
            all.storeAfter = 1;
            storeAll.emplace(
                replayTrace(trace, cost, all, nullptr, [&](double) { return !stop.load(); }));
        });
    }
    auto r = replayTrace(trace, cost, config, nullptr, [&](double f) {
        if (progress && !progress(f)) stop = true;
        return !stop.load();
    });
    if (!r.ok() || r->cancelled) stop = true;
    if (side.joinable()) side.join();
    if (!r) return r.error();
    ReplayRun run{std::move(*r), std::nullopt, std::nullopt};
    if (run.result.cancelled) return run;
    if (storeAll) {
        if (!*storeAll) return storeAll->error();
        run.storeAll = std::move(**storeAll);
    }
    bool backlog = false;
    for (const auto& t : run.result.tiers)
        backlog = backlog || t.writesDropped || t.lookupsLate || t.lookupsDropped;
    if (backlog) {
        ReplayConfig free = config;
        free.writeQueue = false;
        // No servers (nothing queues), except a fleet's: its caches are its servers'.
        if (!config.isFleet()) free.instances = 0;
        auto f = replayTrace(trace, cost, free, nullptr,
                             [&](double) { return !progress || progress(1.0); });
        if (!f) return f.error();
        if (f->cancelled) {
            run.result.cancelled = true;
            return run;
        }
        run.writesKeptUp = std::move(*f);
    }
    return run;
}

} // namespace kvbe
