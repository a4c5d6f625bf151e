// A link's busy time over the trace (docs/workload-model.md, "Saturation"), counted in bins of
// whole minutes: the reads of each rule on each tier, the reads the hits offer and the writes.
// Internal to kvbe_core.
#pragma once

#include "kvbe/trace/trace_sim.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvbe::detail {

// The bins of a replay: 1 minute, or the whole number of minutes that keeps them at most
// kMaxLinkBins from the first arrival to the last.
double linkBinSeconds(std::uint64_t windows);

// Busy time in bins of binS seconds from time 0. An interval is split across the bins it covers
// (the bins it covers whole in O(1), through a difference array); bins grow as intervals reach
// past the last one, up to four times kMaxLinkBins, after which the rest lands in the last bin.
class BusySeries {
  public:
    BusySeries() = default;
    explicit BusySeries(double binS) : m_bin(binS) {}

    bool on() const { return m_bin > 0; }
    // [s, e) busy (e ≥ s). Inline for the common case: within the bin added to last.
    void add(double s, double e) {
        if (s >= m_lo && e <= m_hi && e > s) {
            m_part[m_cur] += e - s;
            m_busy += e - s;
            if (e > m_lastEnd) m_lastEnd = e;
            return;
        }
        addSlow(s, e);
    }
    // `amount` seconds counted in the bin of time t (demand offered at t, not an interval).
    void addAt(double t, double amount) {
        if (t >= m_lo && t < m_hi && amount > 0) {
            m_part[m_cur] += amount;
            m_busy += amount;
            if (t > m_lastEnd) m_lastEnd = t;
            return;
        }
        addAtSlow(t, amount);
    }
    double busyS() const { return m_busy; }
    double lastEnd() const { return m_lastEnd; }

    // The busy seconds of each bin, and the summary over a span of spanS seconds (at least the
    // bins it has).
    std::vector<double> perBin() const;
    LinkUse summary(double spanS) const;

  private:
    std::size_t binOf(double t);
    void addSlow(double s, double e);
    void addAtSlow(double t, double amount);
    // The bin added to last, [m_lo, m_hi): empty until then (and for the last bin, which takes
    // what comes after it).
    void remember(std::size_t b);
    std::size_t m_cur = 0;
    double m_lo = 1, m_hi = 0;

    double m_bin = 0;
    std::vector<double> m_part;       // seconds added to a bin piecewise
    std::vector<std::int32_t> m_full; // difference array: bins covered whole
    double m_busy = 0, m_lastEnd = 0;
};

} // namespace kvbe::detail
