#include "trace_link_use.h"

#include <algorithm>
#include <cmath>

namespace kvbe::detail {

namespace {
constexpr std::size_t kMostBins = 4 * kMaxLinkBins;
}

double linkBinSeconds(std::uint64_t windows) {
    const double per = std::ceil(static_cast<double>(windows) / double(kMaxLinkBins));
    return 60.0 * std::max(1.0, per);
}

std::size_t BusySeries::binOf(double t) {
    const double b = std::floor(std::max(0.0, t) / m_bin);
    const std::size_t i = b < double(kMostBins) ? static_cast<std::size_t>(b) : kMostBins - 1;
    if (i >= m_part.size()) {
        m_part.resize(i + 1, 0.0);
        m_full.resize(i + 2, 0);
    }
    return i;
}

void BusySeries::remember(std::size_t b) {
    m_cur = b;
    if (b + 1 >= kMostBins) { // the last bin takes everything after it: no shortcut
        m_lo = 1;
        m_hi = 0;
        return;
    }
    m_lo = static_cast<double>(b) * m_bin;
    m_hi = static_cast<double>(b + 1) * m_bin;
}

void BusySeries::addSlow(double s, double e) {
    if (!on() || !(e > s)) return;
    m_busy += e - s;
    m_lastEnd = std::max(m_lastEnd, e);
    const std::size_t b0 = binOf(s);
    std::size_t b1 = binOf(e);
    // An interval ending exactly where a bin starts does not reach into it.
    if (b1 > b0 && e <= static_cast<double>(b1) * m_bin) --b1;
    if (b0 == b1) {
        m_part[b0] += e - s;
        remember(b0);
        return;
    }
    remember(b1);
    m_part[b0] += static_cast<double>(b0 + 1) * m_bin - s;
    m_part[b1] += e - static_cast<double>(b1) * m_bin;
    if (b1 > b0 + 1) {
        m_full[b0 + 1] += 1;
        m_full[b1] -= 1;
    }
}

void BusySeries::addAtSlow(double t, double amount) {
    if (!on() || !(amount > 0)) return;
    m_busy += amount;
    m_lastEnd = std::max(m_lastEnd, t);
    const std::size_t b = binOf(t);
    m_part[b] += amount;
    remember(b);
}

std::vector<double> BusySeries::perBin() const {
    std::vector<double> out(m_part.size());
    std::int64_t covered = 0;
    for (std::size_t b = 0; b < out.size(); ++b) {
        covered += m_full[b];
        out[b] = m_part[b] + static_cast<double>(covered) * m_bin;
    }
    return out;
}

LinkUse BusySeries::summary(double spanS) const {
    LinkUse u;
    if (!on()) return u;
    u.busyS = m_busy;
    const double span = std::max(spanS, m_lastEnd);
    u.meanShare = span > 0 ? m_busy / span : 0;
    const auto bins = perBin();
    // Every bin of the span, the empty ones too.
    const auto spanBins = static_cast<std::size_t>(
        std::min(double(kMostBins), std::floor(std::max(0.0, spanS) / m_bin) + 1));
    u.share.assign(std::max(spanBins, bins.size()), 0.0F);
    // The last bin counts over the part of it the span covers (at least a second).
    const double end = span;
    for (std::size_t b = 0; b < bins.size(); ++b) {
        const double start = static_cast<double>(b) * m_bin;
        const double len =
            end < start + m_bin ? std::max(end - start, std::min(m_bin, 1.0)) : m_bin;
        const double share = bins[b] / len;
        u.share[b] = static_cast<float>(share);
        u.peakShare = std::max(u.peakShare, share);
        if (share > 1 + 1e-9) ++u.binsOver;
    }
    return u;
}

} // namespace kvbe::detail
