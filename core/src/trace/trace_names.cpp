// The names of the replay's policies, placements and admission rules as the command line and the
// reports spell them, the rules' lookup in a result, and the capacity grid.
#include "kvbe/trace/trace_sim.h"

#include <cmath>

namespace kvbe {

std::string_view toString(EvictionPolicy p) {
    return p == EvictionPolicy::Lru ? "lru" : "s3fifo";
}
std::string_view toString(Placement p) {
    return p == Placement::WriteThrough ? "write-through" : "cascade";
}
std::string_view toString(Admission a) {
    return a == Admission::Always ? "always" : a == Admission::Breakeven ? "breakeven" : "optimal";
}
std::optional<EvictionPolicy> parseEvictionPolicy(std::string_view s) {
    if (s == "lru") return EvictionPolicy::Lru;
    if (s == "s3fifo" || s == "s3-fifo") return EvictionPolicy::S3Fifo;
    return std::nullopt;
}
std::optional<Placement> parsePlacement(std::string_view s) {
    if (s == "write-through") return Placement::WriteThrough;
    if (s == "cascade") return Placement::Cascade;
    return std::nullopt;
}
std::optional<Admission> parseAdmission(std::string_view s) {
    if (s == "always") return Admission::Always;
    if (s == "breakeven") return Admission::Breakeven;
    if (s == "optimal") return Admission::Optimal;
    return std::nullopt;
}

const RuleResult* ReplayResult::rule(std::string_view name) const {
    for (const auto& r : rules)
        if (r.name == name) return &r;
    return nullptr;
}

std::vector<double> logGrid(double lo, double hi, int n) {
    std::vector<double> g;
    if (n <= 0 || lo <= 0 || hi < lo) return g;
    if (n == 1) return {lo};
    const double a = std::log(lo), b = std::log(hi);
    for (int i = 0; i < n; ++i)
        g.push_back(std::exp(a + (b - a) * i / (n - 1)));
    g.front() = lo;
    g.back() = hi;
    return g;
}

} // namespace kvbe
