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

namespace {

std::string figureLabel(const PublishedPoint& p) {
    switch (p.quantity) {
    case PublishedQuantity::BreakevenBandwidth:
        return "B*";
    case PublishedQuantity::BreakevenPrefix:
        return "p* " + p.tier;
    case PublishedQuantity::MinCachedFraction:
        return "f* " + p.tier;
    case PublishedQuantity::Bandwidth:
        return p.path.empty() ? "bandwidth " + p.tier : p.path;
    }
    return {};
}

std::string publishedText(const PublishedPoint& p) {
    if (p.low && p.quantity == PublishedQuantity::Bandwidth) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g to %g GB/s", *p.low / 1e9, *p.high / 1e9);
        return buf;
    }
    return p.low ? formatPublishedValue(p.quantity, *p.low) + " to " +
                       formatPublishedValue(p.quantity, *p.high)
                 : formatPublishedValue(p.quantity, p.value);
}

std::string atText(const PublishedPoint& p) {
    return p.tokensLabel.empty() ? (p.tokens ? formatTokens(*p.tokens) : "") : p.tokensLabel;
}

std::string modelText(const PublishedComparison& r) {
    return r.model ? formatPublishedValue(r.point.quantity, *r.model) : std::string("none");
}

std::string diffText(const PublishedComparison& r) {
    const auto rel = r.relative();
    if (!rel) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f %%", *rel * 100);
    return buf;
}

std::string pad(std::string s, size_t w) {
    return padRight(std::move(s), w);
}

} // namespace

std::string publishedComparisonTable(const std::string& title,
                                     const std::vector<PublishedComparison>& rows) {
    std::string out = title + "\n";
    out += "  " + pad("figure", 22) + pad("at", 14) + pad("published", 22) + pad("model", 14) +
           pad("diff", 9) + "model tier\n";
    for (const auto& r : rows) {
        const auto& p = r.point;
        out +=
            "  " + pad(figureLabel(p), 22) + pad(atText(p), 14) + pad(publishedText(p), 22) +
            pad(modelText(r), 14) + pad(diffText(r), 9) +
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

std::string heldOutTable(const HeldOutForms& h) {
    const std::string layers = std::to_string(h.layers);
    std::string out = "Held out: fitted on " + h.fittedOn.model + " (" +
                      std::to_string(h.fittedOn.layers) + " KV/state layers), evaluated on " +
                      h.model + " (" + layers +
                      "). Both forms of the fixed cost, each from what the tier cost on the model "
                      "fitted on:\n";
    const std::string perLayer =
        "per layer (× " + layers + "/" + std::to_string(h.fittedOn.layers) + ")";
    out += "  " + pad("figure", 14) + pad("at", 8) + pad("published", 16) + pad(perLayer, 22) +
           pad("diff", 10) + pad("constant", 16) + "diff\n";
    for (size_t i = 0; i < h.perLayer.size() && i < h.constant.size(); ++i) {
        const auto& a = h.perLayer[i];
        const auto& b = h.constant[i];
        out += "  " + pad(figureLabel(a.point), 14) + pad(atText(a.point), 8) +
               pad(publishedText(a.point), 16) + pad(modelText(a), 22) + pad(diffText(a), 10) +
               pad(modelText(b), 16) + diffText(b) + "\n";
    }
    out += "  (this scenario: " +
           (h.scenarioForm ? std::string(toString(*h.scenarioForm))
                           : std::string("t0 and t_layer both set")) +
           "; diff = model / published - 1)\n";
    return out;
}

} // namespace kvbe
