#include "kvbe/scenario/calc_report.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace kvbe {
using nlohmann::json;

namespace {

json numberOrNull(std::optional<double> v) {
    if (!v || !std::isfinite(*v)) return nullptr;
    return *v;
}
json finiteOrNull(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}
// Counts (tokens, bytes, parameters) print as integers when they are whole numbers.
std::string pad(std::string s, size_t width, bool right = true) {
    return right ? padLeft(std::move(s), width) : padRight(std::move(s), width);
}

std::string printf1(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// Bytes of a state snapshot: "49.1 MB", or "-" where there is none.
std::string stateText(double bytes) {
    if (!(bytes > 0)) return "-";
    return printf1("%.1f MB", bytes / 1e6);
}

// "full", "windowed", "mla"; hybrids say so, since their KV is not the whole story.
std::string attentionKind(const ModelSpec& m) {
    if (m.stateSsmElems > 0 || m.stateConvElems > 0) return "hybrid";
    if (m.mla) return m.hasSparseAttention() ? "sparse-mla" : "mla";
    if (m.isHybrid()) return "shared-kv";
    return m.hasWindows() ? "windowed" : "full";
}

std::string opt(std::optional<double> v, const char* f = "%.6g") {
    return v && std::isfinite(*v) ? printf1(f, *v) : "";
}

} // namespace

CalcReport makeCalcReport(const Evaluation& e, const std::vector<double>& lengths,
                          double fraction) {
    CalcReport r;
    r.eval = &e;
    r.fraction = fraction;
    for (const auto& t : e.tiers)
        r.breakevenPrefix.push_back(e.cost.breakevenPrefix(t));
    for (double n : lengths) {
        CalcRow row;
        row.tokens = n;
        row.pastContext = n > e.model.contextLimit;
        row.kvBytes = e.cost.kvBytes(n);
        row.tRecompute = e.cost.tMiss(n);
        row.breakevenBandwidth = e.cost.breakevenBandwidth(n);
        for (size_t i = 0; i < e.tiers.size(); ++i) {
            const auto& t = e.tiers[i];
            CalcRow::PerTier pt;
            pt.tHit = e.cost.tHit(t, n, fraction * n);
            pt.speedup = row.tRecompute / pt.tHit;
            pt.minFraction = e.cost.minCachedFraction(t, n, r.breakevenPrefix[i]);
            pt.breakevenBandwidth = e.cost.breakevenBandwidth(n, t);
            row.tiers.push_back(pt);
        }
        r.rows.push_back(std::move(row));
    }
    return r;
}

json calcJson(const CalcReport& r) {
    const auto& e = *r.eval;
    const auto& m = e.model;
    const auto& in = e.cost.inputs();
    json out;
    out["model"] = {
        {"name", m.id},
        {"source", m.source},
        {"layers", m.layers},
        {"kv_state_layers", m.kvStateLayers()},
        {"q_heads", m.qHeads},
        {"kv_heads", m.kvHeads},
        {"head_dim", m.headDim},
        {"attention", attentionKind(m)},
        {"layer_mix", m.layerMix()},
        {"kv_dtype", std::string(toString(in.kvDtype))},
        {"kv_bytes_per_token", jsonCount(e.cost.kvBytesPerToken())},
        {"state_dtype", std::string(toString(in.stateDtype.value_or(m.stateDtypeDefault)))},
        {"state_bytes", jsonCount(e.cost.stateBytes())},
        {"params_total", jsonCount(m.paramsTotal)},
        {"params_active", jsonCount(m.paramsActive)},
        {"params_used", jsonCount(e.cost.simpleParams())},
        {"context_limit", jsonCount(m.contextLimit)}};
    out["gpu"] = {{"name", e.gpu ? e.gpu->name : std::string("custom")},
                  {"key", e.gpu ? e.gpu->key : std::string()},
                  {"peak_flops", e.peakFlops},
                  {"utilisation", in.utilisation},
                  {"tensor_parallel", in.tensorParallel},
                  {"flop_model", std::string(toString(in.flopModel))},
                  {"recompute", e.cost.analytic() ? "analytic" : "measured"}};
    out["cached_fraction"] = r.fraction;
    out["tiers"] = json::array();
    for (size_t i = 0; i < e.tiers.size(); ++i) {
        const auto& t = e.tiers[i];
        const auto p = r.breakevenPrefix[i];
        const auto& tc = e.scenario.tiers[i];
        out["tiers"].push_back(
            {{"name", t.name},
             {"bandwidth_Bps", t.bandwidthBps},
             {"amplification", t.amplification},
             {"effective_bandwidth_Bps", t.effectiveBandwidthBps()},
             {"write_bandwidth_Bps", tc.writeGBps ? json(*tc.writeGBps * 1e9) : json(nullptr)},
             {"t_fixed_s", e.cost.tFixed(t)},
             {"t0_s", t.tFixedS},
             {"t_layer_s", t.tLayerS},
             {"breakeven_prefix_tokens", p ? jsonCount(*wholeBreakevenPrefix(p)) : json(nullptr)}});
    }
    out["rows"] = json::array();
    for (const auto& row : r.rows) {
        json jr = {{"tokens", jsonCount(row.tokens)},
                   {"past_context", row.pastContext},
                   {"kv_bytes", jsonCount(row.kvBytes)},
                   {"t_recompute_s", finiteOrNull(row.tRecompute)},
                   {"breakeven_bandwidth_Bps", numberOrNull(row.breakevenBandwidth)}};
        jr["tiers"] = json::object();
        for (size_t i = 0; i < e.tiers.size(); ++i) {
            const auto& pt = row.tiers[i];
            jr["tiers"][e.tiers[i].name] = {
                {"t_hit_s", finiteOrNull(pt.tHit)},
                {"speedup", finiteOrNull(pt.speedup)},
                {"min_cached_fraction", numberOrNull(pt.minFraction)},
                {"breakeven_bandwidth_Bps", numberOrNull(pt.breakevenBandwidth)}};
        }
        out["rows"].push_back(std::move(jr));
    }
    return out;
}

std::string calcCsv(const CalcReport& r) {
    const auto& e = *r.eval;
    std::ostringstream os;
    os << "tokens,kv_bytes,t_recompute_s,breakeven_bandwidth_Bps";
    for (const auto& t : e.tiers)
        for (const char* col :
             {"t_hit_s", "speedup", "min_cached_fraction", "breakeven_bandwidth_Bps"})
            os << ',' << csvField(t.name + ":" + col);
    os << ",past_context\n";
    for (const auto& row : r.rows) {
        os << printf1("%.0f", row.tokens) << ',' << printf1("%.0f", row.kvBytes) << ','
           << printf1("%.6g", row.tRecompute) << ',' << opt(row.breakevenBandwidth);
        for (const auto& pt : row.tiers)
            os << ',' << printf1("%.6g", pt.tHit) << ',' << printf1("%.6g", pt.speedup) << ','
               << opt(pt.minFraction) << ',' << opt(pt.breakevenBandwidth);
        os << ',' << (row.pastContext ? "true" : "false") << '\n';
    }
    return os.str();
}

std::string calcTable(const CalcReport& r) {
    const auto& e = *r.eval;
    const auto& m = e.model;
    const auto& in = e.cost.inputs();
    std::ostringstream os;
    os << "Model   " << m.id << ": " << m.layers << " layers, " << m.qHeads << " query / "
       << (m.mla ? std::string("MLA latent") : std::to_string(m.kvHeads) + " KV heads") << ", d "
       << m.headDim << ", " << formatTokens(e.cost.kvBytesPerToken()) << " KV bytes/token ("
       << toString(in.kvDtype) << "), P " << printf1("%.3g", e.cost.simpleParams()) << "\n";
    if (m.isHybrid())
        os << "Layers  " << m.layerMix() << "; state " << stateText(e.cost.stateBytes())
           << " per cached prefix (" << toString(in.stateDtype.value_or(m.stateDtypeDefault))
           << " SSM state)\n";
    os << "GPU     " << (e.gpu ? e.gpu->name : std::string("custom")) << ": "
       << printf1("%.1f", e.peakFlops / 1e12) << " TFLOP/s × "
       << printf1("%.0f", in.utilisation * 100) << " %" << (in.rampHalfTokens ? " (ramp)" : "");
    if (in.tensorParallel > 1)
        os << ", TP " << in.tensorParallel << (in.sharedPath ? " (shared path)" : "");
    os << ", " << toString(in.flopModel) << " FLOP model, "
       << (e.cost.analytic() ? "analytic" : "measured") << " recompute\n";
    os << "Context " << formatTokens(m.contextLimit) << " tokens\n";
    os << "Tiers\n";
    for (size_t i = 0; i < e.tiers.size(); ++i) {
        const auto& t = e.tiers[i];
        const auto& tc = e.scenario.tiers[i];
        const auto p = r.breakevenPrefix[i];
        os << "  " << pad(t.name, 28, false) << pad(formatBandwidth(t.bandwidthBps), 11);
        if (t.amplification != 1)
            os << " × " << printf1("%.3g", t.amplification)
               << " amplification = " << formatBandwidth(t.effectiveBandwidthBps()) << " effective";
        os << "  write " << (tc.writeGBps ? formatBandwidth(*tc.writeGBps * 1e9) : std::string("-"))
           << "  t_fixed " << pad(formatSeconds(e.cost.tFixed(t)), 9);
        if (t.tLayerS > 0)
            os << " (" << formatSeconds(t.tFixedS) << " + " << e.cost.kvStateLayers()
               << " layers × " << formatSeconds(t.tLayerS) << ")";
        os << "  break-even prefix "
           << (p ? formatTokens(*wholeBreakevenPrefix(p)) + " tokens" : std::string("never"))
           << "\n";
    }
    os << "\nCached fraction for t_hit and speedup: " << printf1("%.0f", r.fraction * 100)
       << " %\n\n";

    // Cells first, then each column as wide as its widest cell: no value runs into the next.
    bool anyPast = false;
    std::vector<std::vector<std::string>> cells;
    for (const auto& row : r.rows) {
        anyPast = anyPast || row.pastContext;
        std::vector<std::string> c{formatTokens(row.tokens) + (row.pastContext ? " *" : ""),
                                   formatBytes(row.kvBytes), formatSeconds(row.tRecompute),
                                   row.breakevenBandwidth ? formatBandwidth(*row.breakevenBandwidth)
                                                          : "none"};
        for (const auto& pt : row.tiers) {
            c.push_back(formatSeconds(pt.tHit));
            c.push_back(pt.speedup >= 1e6 ? printf1("%.3g×", pt.speedup)
                                          : printf1("%.2f×", pt.speedup));
            c.push_back(pt.minFraction ? printf1(*pt.minFraction < 0.01 ? "%.2g %%" : "%.1f %%",
                                                 *pt.minFraction * 100)
                                       : "never");
        }
        cells.push_back(std::move(c));
    }
    const std::vector<std::string> head{"tokens", "KV", "recompute", "B*"};
    const std::vector<std::string> tierHead{"t_hit", "speedup", "f*"};
    std::vector<size_t> width{9, 11, 11, 11};
    for (size_t i = 0; i < e.tiers.size(); ++i)
        for (size_t w : {9, 8, 9})
            width.push_back(w);
    for (const auto& c : cells)
        for (size_t k = 0; k < c.size(); ++k)
            width[k] = std::max(width[k], displayWidth(c[k]) + 1);
    size_t base = 0;
    for (size_t k = 0; k < 4; ++k) {
        os << pad(head[k], width[k]);
        base += width[k];
    }
    for (size_t i = 0; i < e.tiers.size(); ++i) {
        const size_t span = width[4 + 3 * i] + width[5 + 3 * i] + width[6 + 3 * i];
        std::string name = e.tiers[i].name;
        if (displayWidth(name) > span) name = name.substr(0, span);
        os << "  | " << pad(name, span, false);
    }
    os << "\n" << pad("", base);
    for (size_t i = 0; i < e.tiers.size(); ++i) {
        os << "  | ";
        for (size_t k = 0; k < 3; ++k)
            os << pad(tierHead[k], width[4 + 3 * i + k]);
    }
    os << "\n";
    for (const auto& c : cells) {
        for (size_t k = 0; k < 4; ++k)
            os << pad(c[k], width[k]);
        for (size_t i = 0; i < e.tiers.size(); ++i) {
            os << "  | ";
            for (size_t k = 0; k < 3; ++k)
                os << pad(c[4 + 3 * i + k], width[4 + 3 * i + k]);
        }
        os << "\n";
    }
    os << "\nB* is the bandwidth a fully cached prompt needs to tie with recompute (no fixed "
          "cost),\n"
          "to be compared with a tier's effective bandwidth (its bandwidth / amplification);\n"
          "f* is the smallest cached fraction at which a hit from the tier beats recompute.\n";
    if (anyPast)
        os << "* past the model's context of " << formatTokens(m.contextLimit)
           << " tokens (--allow-past-context): no such prompt fits the model; the row extrapolates "
              "the formulas.\n";
    return os.str();
}

json modelsJson(const Presets& p) {
    json a = json::array();
    for (const auto& m : p.models()) {
        a.push_back({{"id", m.id},
                     {"layers", m.spec.layers},
                     {"q_heads", m.spec.qHeads},
                     {"kv_heads", m.spec.kvHeads},
                     {"head_dim", m.spec.headDim},
                     {"attention", attentionKind(m.spec)},
                     {"layer_mix", m.spec.layerMix()},
                     {"kv_bytes_per_token", jsonCount(m.spec.kvBytesPerToken(m.spec.weightDtype))},
                     {"state_bytes", jsonCount(m.spec.stateBytes(m.spec.stateDtypeDefault))},
                     {"state_dtype", std::string(toString(m.spec.stateDtypeDefault))},
                     {"params_total", jsonCount(m.spec.paramsTotal)},
                     {"params_active", jsonCount(m.spec.paramsActive)},
                     {"context_limit", jsonCount(m.spec.contextLimit)}});
    }
    return a;
}

std::string modelsTable(const Presets& p) {
    std::ostringstream os;
    os << pad("model", 44, false) << pad("layers", 7) << pad("heads q/kv", 11) << pad("d", 5)
       << pad("KV B/token", 12) << pad("state", 10) << pad("params", 10) << pad("active", 10)
       << pad("context", 11) << "  attention\n";
    for (const auto& m : p.models()) {
        const auto& s = m.spec;
        os << pad(m.id, 44, false) << pad(std::to_string(s.layers), 7)
           << pad(std::to_string(s.qHeads) + "/" + std::to_string(s.kvHeads), 11)
           << pad(std::to_string(s.headDim), 5)
           << pad(formatTokens(s.kvBytesPerToken(s.weightDtype)), 12)
           << pad(stateText(s.stateBytes(s.stateDtypeDefault)), 10)
           << pad(printf1("%.2fB", s.paramsTotal / 1e9), 10)
           << pad(printf1("%.2fB", s.paramsActive / 1e9), 10)
           << pad(formatTokens(s.contextLimit), 11) << "  " << attentionKind(s)
           << (s.isHybrid() ? " (" + s.layerMix() + ")" : std::string()) << "\n";
    }
    return os.str();
}

json gpusJson(const Presets& p) {
    json a = json::array();
    for (const auto& [k, g] : p.gpus()) {
        a.push_back({{"key", k},
                     {"name", g.name},
                     {"bf16_flops", g.bf16Flops},
                     {"fp8_flops", g.fp8Flops ? json(*g.fp8Flops) : json(nullptr)},
                     {"memory_bytes", jsonCount(g.memoryBytes)},
                     {"host_link", g.hostLink},
                     {"host_link_Bps", g.hostLinkBps},
                     {"sources", g.sources}});
    }
    return a;
}

std::string gpusTable(const Presets& p) {
    std::ostringstream os;
    os << pad("key", 15, false) << pad("name", 38, false) << pad("BF16 TF/s", 10)
       << pad("FP8 TF/s", 10) << pad("memory", 9) << "  host link\n";
    for (const auto& [k, g] : p.gpus())
        os << pad(k, 15, false) << pad(g.name, 38, false)
           << pad(printf1("%.1f", g.bf16Flops / 1e12), 10)
           << pad(g.fp8Flops ? printf1("%.1f", *g.fp8Flops / 1e12) : "-", 10)
           << pad(printf1("%.0f GB", g.memoryBytes / 1e9), 9) << "  " << g.hostLink << ", "
           << formatBandwidth(g.hostLinkBps) << " practical\n";
    return os.str();
}

json tiersJson(const Presets& p) {
    json a = json::array();
    for (const auto& [k, t] : p.tiers()) {
        a.push_back({{"key", k},
                     {"name", t.name},
                     {"kind", t.kind ? json(std::string(toString(*t.kind))) : json("")},
                     {"read_Bps", t.readBps},
                     {"write_Bps", t.writeBps},
                     {"t_fixed_s", t.tFixedS},
                     {"t_layer_s", t.tLayerS},
                     {"amplification", t.amplification},
                     {"sources", t.sources}});
    }
    return a;
}

std::string tiersTable(const Presets& p) {
    std::ostringstream os;
    os << pad("key", 17, false) << pad("name", 28, false) << pad("read", 11) << pad("write", 11)
       << pad("t_fixed", 10) << pad("amplif.", 9) << "\n";
    for (const auto& [k, t] : p.tiers())
        os << pad(k, 17, false) << pad(t.name, 28, false) << pad(formatBandwidth(t.readBps), 11)
           << pad(formatBandwidth(t.writeBps), 11) << pad(formatSeconds(t.tFixedS), 10)
           << pad(printf1("%.3g×", t.amplification), 9) << "\n";
    return os.str();
}

} // namespace kvbe
