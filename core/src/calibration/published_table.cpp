// How published figures are printed: a value in its quantity's unit, and the table of published
// figures beside the model's (`kvbe-cli calc`, `published compare` and `published fit`).
#include "kvbe/calibration/published.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"

#include <cmath>
#include <cstdio>

namespace kvbe {

std::string formatPublishedValue(PublishedQuantity q, double si) {
    char buf[64];
    switch (q) {
    case PublishedQuantity::BreakevenBandwidth:
    case PublishedQuantity::Bandwidth:
        return formatBandwidth(si);
    case PublishedQuantity::BreakevenPrefix:
        return formatTokens(std::round(si)) + " tokens";
    case PublishedQuantity::MinCachedFraction:
        std::snprintf(buf, sizeof buf, "%.1f %%", si * 100);
        return buf;
    }
    return {};
}

std::string publishedComparisonTable(const std::string& title,
                                     const std::vector<PublishedComparison>& rows) {
    const auto pad = [](std::string s, size_t w) { return padRight(std::move(s), w); };
    std::string out = title + "\n";
    out += "  " + pad("figure", 22) + pad("at", 14) + pad("published", 22) + pad("model", 14) +
           pad("diff", 9) + "model tier\n";
    for (const auto& r : rows) {
        const auto& p = r.point;
        std::string figure;
        switch (p.quantity) {
        case PublishedQuantity::BreakevenBandwidth:
            figure = "B*";
            break;
        case PublishedQuantity::BreakevenPrefix:
            figure = "p* " + p.tier;
            break;
        case PublishedQuantity::MinCachedFraction:
            figure = "f* " + p.tier;
            break;
        case PublishedQuantity::Bandwidth:
            figure = p.path.empty() ? "bandwidth " + p.tier : p.path;
            break;
        }
        std::string published = p.low ? formatPublishedValue(p.quantity, *p.low) + " to " +
                                            formatPublishedValue(p.quantity, *p.high)
                                      : formatPublishedValue(p.quantity, p.value);
        if (p.low && p.quantity == PublishedQuantity::Bandwidth) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%g to %g GB/s", *p.low / 1e9, *p.high / 1e9);
            published = buf;
        }
        const std::string at =
            p.tokensLabel.empty() ? (p.tokens ? formatTokens(*p.tokens) : "") : p.tokensLabel;
        std::string diff = "-";
        if (auto rel = r.relative()) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%+.1f %%", *rel * 100);
            diff = buf;
        }
        out +=
            "  " + pad(figure, 22) + pad(at, 14) + pad(published, 22) +
            pad(r.model ? formatPublishedValue(p.quantity, *r.model) : std::string("none"), 14) +
            pad(diff, 9) +
            (r.modelTier.empty() ? std::string(p.quantity == PublishedQuantity::BreakevenBandwidth
                                                   ? "(no fixed cost)"
                                                   : "(no such tier)")
                                 : r.modelTier) +
            "\n";
    }
    out += "  (published: as quoted in the reference file, each value with its source; diff = "
           "model / published - 1)\n";
    return out;
}

} // namespace kvbe
