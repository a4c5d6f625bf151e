#include "kvbe/calibration/published.h"

#include "kvbe/base/text.h"
#include "kvbe/scenario/hardware.h"

#include "kvbe/base/json_fields.h"
#include "kvbe/base/json_text.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace kvbe {
using nlohmann::json;

namespace {

std::string afterSlash(const std::string& s) {
    const auto pos = s.find('/');
    return pos == std::string::npos ? s : s.substr(pos + 1);
}

std::optional<PublishedQuantity> parseQuantity(const std::string& s) {
    if (s == "breakeven_bandwidth") return PublishedQuantity::BreakevenBandwidth;
    if (s == "breakeven_prefix") return PublishedQuantity::BreakevenPrefix;
    if (s == "min_cached_fraction") return PublishedQuantity::MinCachedFraction;
    if (s == "bandwidth") return PublishedQuantity::Bandwidth;
    return std::nullopt;
}

// The unit each quantity is published in, and its factor to SI.
struct UnitRule {
    const char* unit;
    double toSi;
};
UnitRule unitFor(PublishedQuantity q) {
    switch (q) {
    case PublishedQuantity::BreakevenBandwidth:
    case PublishedQuantity::Bandwidth:
        return {"GB/s", 1e9};
    case PublishedQuantity::BreakevenPrefix:
        return {"tokens", 1};
    case PublishedQuantity::MinCachedFraction:
        return {"%", 0.01};
    }
    return {"", 1};
}

PublishedReference parse(const FieldReader& r) {
    const json& j = r.root();
    if (!j.is_object()) r.fail("(top level)", "a published-reference object", &j);
    if (!j.contains("kvbe_published")) r.fail("kvbe_published", "the format version, 1", nullptr);
    if (!j["kvbe_published"].is_number_integer() ||
        j["kvbe_published"].get<long long>() != kPublishedVersion)
        r.fail("kvbe_published", "the format version, 1", &j["kvbe_published"]);
    PublishedReference ref;
    ref.file = r.source();
    ref.name = r.string(j, "name", "name").value_or("");
    if (ref.name.empty()) r.fail("name", "a name for the reference", nullptr);
    ref.study = r.string(j, "study", "study").value_or("");
    ref.node = r.string(j, "node", "node").value_or("");
    ref.note = r.string(j, "note", "note").value_or("");
    if (auto k = r.number(j, "tokens_per_k", "tokens_per_k", -1e300, 1e300, "1000 or 1024")) {
        if (*k != 1000 && *k != 1024) r.fail("tokens_per_k", "1000 or 1024", &j["tokens_per_k"]);
        ref.tokensPerK = *k;
    }
    const auto& pts = r.array(j, "points", "points");
    std::set<std::string> ids;
    for (size_t i = 0; i < pts.size(); ++i) {
        const auto& o = pts[i];
        const std::string at = "points[" + std::to_string(i) + "]";
        if (!o.is_object()) r.fail(at, "a point object", &o);
        PublishedPoint p;
        p.id = r.string(o, "id", at + ".id").value_or("");
        if (p.id.empty()) r.fail(at + ".id", "a short unique id", nullptr);
        if (!ids.insert(p.id).second)
            r.failWith("field '" + at + ".id' is \"" + p.id +
                       "\", which an earlier point already uses; expected a unique id");
        const auto q = r.string(o, "quantity", at + ".quantity");
        if (!q)
            r.fail(at + ".quantity",
                   "breakeven_bandwidth, breakeven_prefix, min_cached_fraction or bandwidth",
                   nullptr);
        const auto qv = parseQuantity(*q);
        if (!qv)
            r.fail(at + ".quantity",
                   "breakeven_bandwidth, breakeven_prefix, min_cached_fraction or bandwidth",
                   &o["quantity"]);
        p.quantity = *qv;
        p.model = r.string(o, "model", at + ".model").value_or("");
        if (p.model.empty() && p.quantity != PublishedQuantity::Bandwidth)
            r.fail(at + ".model", "the model id the figure was measured with", nullptr);
        p.gpu = lower(r.string(o, "gpu", at + ".gpu").value_or(""));
        if (auto kd = r.string(o, "kv_dtype", at + ".kv_dtype")) {
            p.kvDtype = parseKvDtype(*kd);
            if (!p.kvDtype)
                r.fail(at + ".kv_dtype", "bf16, fp16, fp8, int8 or fp32", &o["kv_dtype"]);
        }
        p.tier = lower(r.string(o, "tier", at + ".tier").value_or(""));
        if (p.tier.empty() && p.quantity != PublishedQuantity::BreakevenBandwidth)
            r.fail(at + ".tier", "the tier the figure is for (\"ssd\", \"mem\", ...)", nullptr);
        p.path = r.string(o, "path", at + ".path").value_or("");
        p.tokens = r.number(o, "tokens", at + ".tokens", 1, 1e9, "a prompt length in tokens");
        p.tokensLabel = r.string(o, "tokens_label", at + ".tokens_label").value_or("");
        if ((p.quantity == PublishedQuantity::BreakevenBandwidth ||
             p.quantity == PublishedQuantity::MinCachedFraction) &&
            !p.tokens)
            r.fail(at + ".tokens", "the prompt length the figure is at", nullptr);
        const auto rule = unitFor(p.quantity);
        p.unit = r.string(o, "unit", at + ".unit").value_or("");
        if (p.unit != rule.unit)
            r.fail(at + ".unit", std::string("\"") + rule.unit + "\" for " + *q,
                   o.contains("unit") ? &o["unit"] : nullptr);
        const std::string positive = "a positive number of " + p.unit;
        const auto v = r.number(o, "value", at + ".value", 1e-12, 1e12, positive);
        const auto lo = r.number(o, "min", at + ".min", 1e-12, 1e12, positive);
        const auto hi = r.number(o, "max", at + ".max", 1e-12, 1e12, positive);
        if (v && (lo || hi))
            r.failWith("point '" + p.id +
                       "' has both value and min/max; expected one or the other");
        if (!v && !(lo && hi))
            r.fail(at + ".value", "a value, or min and max for a range", nullptr);
        if (lo && hi && *lo > *hi)
            r.failWith("field '" + at + ".min' is more than its max; expected min <= max");
        if (p.quantity == PublishedQuantity::MinCachedFraction &&
            (v.value_or(0) > 100 || hi.value_or(0) > 100))
            r.fail(at + ".value", "a percentage up to 100", &o[v ? "value" : "max"]);
        if (v) {
            p.value = *v * rule.toSi;
        } else {
            p.low = *lo * rule.toSi;
            p.high = *hi * rule.toSi;
            p.value = 0.5 * (*p.low + *p.high);
        }
        p.text = r.string(o, "text", at + ".text").value_or("");
        p.source = r.string(o, "source", at + ".source").value_or("");
        p.quotedIn = r.string(o, "quoted_in", at + ".quoted_in").value_or("");
        p.quote = r.string(o, "quote", at + ".quote").value_or("");
        if (p.text.empty()) r.fail(at + ".text", "the value as the source prints it", nullptr);
        if (p.source.empty()) r.fail(at + ".source", "where the figure was published", nullptr);
        if (p.quote.empty())
            r.fail(at + ".quote", "the sentence the figure is quoted from", nullptr);
        ref.points.push_back(std::move(p));
    }
    if (ref.points.empty()) r.fail("points", "at least one point", &pts);
    return ref;
}

} // namespace

std::string_view toString(PublishedQuantity q) {
    switch (q) {
    case PublishedQuantity::BreakevenBandwidth:
        return "breakeven_bandwidth";
    case PublishedQuantity::BreakevenPrefix:
        return "breakeven_prefix";
    case PublishedQuantity::MinCachedFraction:
        return "min_cached_fraction";
    case PublishedQuantity::Bandwidth:
        return "bandwidth";
    }
    return "";
}

std::string PublishedPoint::describe() const {
    std::string s = text;
    if (!path.empty()) s = path + ": " + s;
    return s + " (" + source + ")";
}

Result<PublishedReference> parsePublishedReference(std::string_view text,
                                                   const std::string& source) {
    auto j = parseJsonText(text, source);
    if (!j) return j.error();
    try {
        return parse(FieldReader(*j, source));
    } catch (const FieldError& e) {
        return Error{e.message};
    } catch (const json::exception& e) {
        return Error{source + ": unexpected content (" + std::string(e.what()) + ")"};
    }
}

Result<PublishedReference> readPublishedReference(const std::filesystem::path& path) {
    auto text = readTextFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    return parsePublishedReference(*text, path.string());
}

Result<std::vector<PublishedReference>> builtinPublishedReferences(const Presets& presets) {
    std::vector<PublishedReference> out;
    for (const auto& [path, text] : presets.publishedTexts()) {
        auto r = parsePublishedReference(text, "resources/" + path);
        if (!r) return r.error();
        out.push_back(std::move(*r));
    }
    return out;
}

bool modelMatches(const PublishedPoint& p, const std::string& scenarioModel,
                  const std::string& modelId) {
    if (p.model.empty()) return true;
    const auto want = lower(p.model);
    for (const auto& have : {lower(scenarioModel), lower(modelId)}) {
        if (have.empty()) continue;
        if (have == want || afterSlash(have) == afterSlash(want)) return true;
        // "org__name" spellings of preset files
        std::string underscored = want;
        if (auto pos = underscored.find('/'); pos != std::string::npos)
            underscored.replace(pos, 1, "__");
        if (have == underscored) return true;
    }
    return false;
}

std::vector<PublishedPoint> matchingPoints(const PublishedReference& ref, const Evaluation& e) {
    std::vector<PublishedPoint> out;
    const std::string gpu = lower(e.scenario.gpu);
    bool anyModel = false;
    for (const auto& p : ref.points) {
        if (!modelMatches(p, e.scenario.model, e.model.id)) continue;
        if (!p.gpu.empty() && (gpu.empty() || gpu.rfind(p.gpu, 0) != 0)) continue;
        if (p.kvDtype && *p.kvDtype != e.cost.inputs().kvDtype) continue;
        anyModel = anyModel || !p.model.empty();
        out.push_back(p);
    }
    // The node's hardware figures belong with its model figures, not with any model on that GPU.
    if (!anyModel) out.clear();
    return out;
}

int tierIndexFor(const std::vector<TierPath>& tiers, const std::string& publishedTier) {
    const auto want = lower(publishedTier);
    for (size_t i = 0; i < tiers.size(); ++i)
        if (lower(tiers[i].name) == want) return static_cast<int>(i);
    // A kind's word ("ssd", "mem"…): the first tier whose name suggests that kind.
    if (const auto kind = tierKindOfWord(want))
        for (size_t i = 0; i < tiers.size(); ++i)
            if (nameSuggestsKind(tiers[i].name, *kind)) return static_cast<int>(i);
    return -1;
}

std::optional<double> publishedModelFigure(const PublishedPoint& p, const CostModel& cost,
                                           const std::vector<TierPath>& tiers,
                                           std::string* tierName) {
    const int idx = tierIndexFor(tiers, p.tier);
    if (tierName) *tierName = idx >= 0 ? tiers[static_cast<size_t>(idx)].name : std::string();
    const TierPath* tier = idx >= 0 ? &tiers[static_cast<size_t>(idx)] : nullptr;
    auto pStar = [&]() -> std::optional<double> {
        if (auto c = cost.breakevenPrefixClosedForm(*tier)) return c;
        return cost.breakevenPrefix(*tier);
    };
    switch (p.quantity) {
    case PublishedQuantity::BreakevenBandwidth:
        return tier ? cost.breakevenBandwidth(*p.tokens, *tier)
                    : cost.breakevenBandwidth(*p.tokens);
    case PublishedQuantity::BreakevenPrefix:
        if (!tier) return std::nullopt;
        return pStar();
    case PublishedQuantity::MinCachedFraction:
        if (!tier) return std::nullopt;
        return cost.minCachedFraction(*tier, *p.tokens, pStar());
    case PublishedQuantity::Bandwidth:
        if (!tier) return std::nullopt;
        return tier->bandwidthBps;
    }
    return std::nullopt;
}

std::vector<PublishedComparison> comparePublished(const std::vector<PublishedPoint>& points,
                                                  const Evaluation& e) {
    std::vector<PublishedComparison> out;
    for (const auto& p : points) {
        PublishedComparison c{p, {}, {}};
        c.model = publishedModelFigure(p, e.cost, e.tiers, &c.modelTier);
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<PublishedMatch> publishedMatches(const std::vector<PublishedReference>& refs,
                                             const Evaluation& e) {
    std::vector<PublishedMatch> out;
    for (const auto& ref : refs)
        if (auto rows = comparePublished(matchingPoints(ref, e), e); !rows.empty())
            out.push_back({&ref, std::move(rows)});
    return out;
}

Result<std::vector<NamedScenario>> builtinScenarios(const Presets& presets) {
    std::vector<NamedScenario> out;
    auto d = defaultScenario(presets);
    if (!d) return d.error();
    out.push_back({d->name, "scenarios/default.kvbe.json", *d});
    for (const auto& [path, text] : presets.scenarioTexts()) {
        auto s = scenarioFromJson(text, "resources/" + path, presets);
        if (!s) return s.error();
        out.push_back({s->name.empty() ? path : s->name, path, std::move(*s)});
    }
    return out;
}

bool hasNominalFixedCost(const TierConfig& t, const Presets& presets) {
    if (t.preset.empty() || !t.measured.empty()) return false;
    const auto* spec = presets.findTier(t.preset);
    auto same = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, b); };
    return spec && same(spec->tFixedS * 1e3, t.tFixedMs) && same(spec->tLayerS * 1e6, t.tLayerUs);
}

} // namespace kvbe
