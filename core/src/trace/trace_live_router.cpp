// LiveRouter (kvbe/trace/live_router.h): a fleet of the replay with no caches of its own, whose
// load is the requests in flight.
#include "kvbe/trace/live_router.h"

#include "trace_fleet.h"

namespace kvbe {

struct LiveRouter::Impl {
    ReplayConfig config;
    std::vector<std::uint64_t> caps{0};
    std::optional<detail::Fleet> fleet;
};

LiveRouter::LiveRouter() : m(std::make_unique<Impl>()) {}
LiveRouter::~LiveRouter() = default;

Result<std::unique_ptr<LiveRouter>> LiveRouter::make(const Trace& trace, const RouterConfig& router,
                                                     int servers) {
    if (servers < 1) return Error{"a live replay needs at least one server"};
    if (router.kind == RouterKind::LlmD || router.kind == RouterKind::Dynamo)
        return Error{"--router " + std::string(toString(router.kind)) +
                     ": it scores the servers by the KV events they publish, which a live "
                     "replay does not read; expected round-robin, random, least-loaded, session "
                     "or sglang"};
    std::unique_ptr<LiveRouter> r(new LiveRouter());
    r->m->config.instances = servers;
    r->m->config.fleet.enabled = true;
    r->m->config.fleet.router = router;
    r->m->fleet.emplace(trace, r->m->config, r->m->caps);
    return r;
}

int LiveRouter::route(std::size_t request, double now) {
    const int s = m->fleet->route(request, now);
    m->fleet->started(request, s);
    return s;
}

void LiveRouter::finished(std::size_t request, int server) {
    m->fleet->finished(request, server);
}

} // namespace kvbe
