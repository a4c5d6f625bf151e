// The replay's routers (docs/workload-model.md, "Routers") in front of live servers: where
// `probe replay` sends each request of a trace. The same code as the replay's fleet, with the
// servers' load counted from the requests in flight. Only the routers that decide from what the
// router itself sees can run live: round-robin, random, least-loaded, session and sglang (its
// tree is its own routing history). llm-d and dynamo read the servers' KV events, which a live
// server must publish; make() refuses them with a sentence.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/trace/fleet.h"
#include "kvbe/trace/trace.h"

#include <cstddef>
#include <memory>

namespace kvbe {

class LiveRouter {
  public:
    static Result<std::unique_ptr<LiveRouter>> make(const Trace& trace, const RouterConfig& router,
                                                    int servers);
    ~LiveRouter();
    LiveRouter(const LiveRouter&) = delete;
    LiveRouter& operator=(const LiveRouter&) = delete;

    // Request i of the trace, sent at `now` seconds from the start: its server, counted as in
    // flight there until finished().
    int route(std::size_t request, double now);
    void finished(std::size_t request, int server);

  private:
    LiveRouter();
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace kvbe
