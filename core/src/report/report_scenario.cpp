// The report's scenario section: the model, the GPU and each tier, every value with where it
// came from (a preset and its source, a fit of measured transfers and the file they came from,
// or the scenario file or a flag).
#include "kvbe/report/report.h"

#include "report_text.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/cost/fixed_cost.h"
#include "kvbe/model/model_spec.h"

#include <cmath>

namespace kvbe {

using report_detail::sig;

namespace {

// "preset h100-sxm (NVIDIA H100 datasheet: …)": the preset and the source of `field`; with no
// field (or none under it), every source it gives, each under its key.
std::string presetSource(const std::string& key, const std::map<std::string, std::string>& sources,
                         const std::string& field = {}) {
    std::string s = "preset " + key;
    if (auto it = sources.find(field); it != sources.end()) return s + " (" + it->second + ")";
    std::string all;
    for (const auto& [k, v] : sources)
        all += (all.empty() ? "" : "; ") + k + ": " + v;
    return all.empty() ? s : s + " (" + all + ")";
}

// Where the scenario's own value came from when no preset gave it.
std::string setBy(const ReportInputs& in) {
    std::string s = "set in " + (in.scenarioFile.empty() ? std::string("the default scenario")
                                                         : in.scenarioFile);
    if (!in.scenarioFlags.empty()) s += ", with " + in.scenarioFlags;
    return s;
}

bool same(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

// The calibration file whose tier reads are the tier's measured transfers, if one was imported.
std::string measuredFrom(const ReportInputs& in, const TierConfig& t) {
    for (const auto& c : in.calibrations)
        for (const auto& m : c.tiers) {
            if (m.reads.size() != t.measured.size() || m.reads.empty()) continue;
            bool all = true;
            for (std::size_t i = 0; i < m.reads.size() && all; ++i)
                all = same(m.reads[i].bytes, t.measured[i].first) &&
                      same(m.reads[i].seconds, t.measured[i].second);
            if (all) return c.source + " (tier '" + m.name + "')";
        }
    return {};
}

} // namespace

ReportSection reportScenarioSection(const ReportInputs& in) {
    const Evaluation& e = *in.eval;
    const Scenario& s = e.scenario;
    const ModelSpec& m = e.model;
    ReportSection sec{"The scenario", {}};
    sec.blocks.push_back(
        {ReportBlock::Kind::Text,
         "Every figure in this report is computed from the inputs below with the cost model of "
         "kvbe (docs/cost-model.md): recompute a prefix on the GPU, or load its KV cache from a "
         "tier. Each value says where it came from.",
         {},
         {},
         {}});
    sec.blocks.push_back(
        {ReportBlock::Kind::Text,
         "The scenario: " +
             (in.scenarioFile.empty() ? std::string("kvbe's default scenario") : in.scenarioFile) +
             (in.scenarioFlags.empty() ? std::string(".")
                                       : ", changed by " + in.scenarioFlags + "."),
         {},
         {},
         {}});
    const std::string scenarioSrc =
        in.scenarioFile.empty() ? std::string("the built-in default scenario") : in.scenarioFile;

    ReportTable model{{"Model", "Value", "From"}, {}};
    const KvDtype kv = s.kvDtype.value_or(m.weightDtype);
    model.rows.push_back({"model", m.id, "model config " + (m.source.empty() ? m.id : m.source)});
    model.rows.push_back({"layers, hidden size",
                          std::to_string(m.layers) + ", " + std::to_string(m.hidden),
                          "config.json"});
    model.rows.push_back({"query / KV heads, head dim",
                          std::to_string(m.qHeads) + " / " + std::to_string(m.kvHeads) + ", " +
                              std::to_string(m.headDim),
                          "config.json"});
    model.rows.push_back({"parameters (P of the FLOP model)",
                          sig(e.cost.simpleParams() / 1e9, 4) + " B",
                          s.paramsOverride ? setBy(in) : std::string("counted from config.json")});
    model.rows.push_back({"KV dtype", std::string(toString(kv)),
                          s.kvDtype ? setBy(in) : std::string("the model's torch_dtype")});
    model.rows.push_back({"KV bytes per token", formatTokens(e.cost.kvBytesPerToken()),
                          "L · 2 · Hkv · d · bytes per element"});
    model.rows.push_back({"context", formatTokens(m.contextLimit), "config.json"});
    sec.blocks.push_back({ReportBlock::Kind::Table, {}, model, {}, {}});

    ReportTable gpu{{"GPU", "Value", "From"}, {}};
    const std::string gpuName = e.gpu ? e.gpu->name : std::string("custom GPU");
    gpu.rows.push_back({"GPU", gpuName, e.gpu ? "preset " + e.gpu->key : setBy(in)});
    std::string peakFrom = setBy(in);
    if (!s.peakTflops && e.gpu) peakFrom = presetSource(e.gpu->key, e.gpu->sources, "peak");
    gpu.rows.push_back(
        {"dense peak (" + s.computeDtype + ")", sig(e.peakFlops / 1e12, 4) + " TFLOP/s", peakFrom});
    gpu.rows.push_back({"utilisation u", sig(s.utilisation, 3),
                        s.fittedOn.empty() ? setBy(in) : "fitted (" + scenarioSrc + ")"});
    gpu.rows.push_back({"tensor parallel", std::to_string(s.tensorParallel), setBy(in)});
    gpu.rows.push_back(
        {"FLOP model", std::string(toString(s.flopModel)),
         s.measuredPrefill.empty() ? setBy(in) : "measured prefill table in " + scenarioSrc});
    if (e.gpu)
        gpu.rows.push_back(
            {"host link", formatBandwidth(e.hostLinkBps),
             s.hostLinkGBps ? setBy(in) : presetSource(e.gpu->key, e.gpu->sources, "host_link")});
    sec.blocks.push_back({ReportBlock::Kind::Table, {}, gpu, {}, {}});

    ReportTable tiers{{"Tier", "Bandwidth", "t_fixed", "Amplification", "From"}, {}};
    std::vector<std::string> fits;
    for (std::size_t i = 0; i < s.tiers.size() && i < e.tiers.size(); ++i) {
        const TierConfig& t = s.tiers[i];
        const TierPath& path = e.tiers[i];
        const TierSpec* preset = t.preset.empty() ? nullptr : in.presets->findTier(t.preset);
        std::string from;
        if (!t.measured.empty()) {
            const std::string file = measuredFrom(in, t);
            from = "fitted from " + std::to_string(t.measured.size()) + " measured transfers" +
                   (file.empty() ? " in " + scenarioSrc : " of " + file);
            fits.push_back(t.name + ": t = t_fixed + bytes / B over " +
                           std::to_string(t.measured.size()) + " measured transfers" +
                           (file.empty() ? " in " + scenarioSrc : " from " + file) +
                           " gives B = " + formatBandwidth(path.bandwidthBps) +
                           ", t_fixed = " + formatSeconds(path.tFixedS));
        } else if (preset && same(preset->readBps, t.bandwidthGBps * 1e9) &&
                   same(preset->tFixedS, t.tFixedMs * 1e-3) &&
                   same(preset->amplification, t.amplification)) {
            from = "preset " + preset->key;
            for (const char* k : {"bandwidth", "read", "t_fixed", "amplification"})
                if (auto it = preset->sources.find(k); it != preset->sources.end())
                    from += "; " + std::string(k) + ": " + it->second;
        } else if (!s.fittedOn.empty()) {
            from = "fitted to a calibration (the scenario was fitted on " +
                   s.fittedOn.front().model + "), " + scenarioSrc;
        } else {
            from = setBy(in) + (preset ? " over preset " + preset->key : std::string());
        }
        if (t.staging != Staging::None)
            from += "; staged " + std::string(toString(t.staging)) + " through the host link";
        tiers.rows.push_back({t.name, formatBandwidth(path.bandwidthBps),
                              formatSeconds(e.cost.tFixed(path)), sig(path.amplification, 3),
                              from});
    }
    sec.blocks.push_back({ReportBlock::Kind::Table, {}, tiers, {}, {}});
    if (!fits.empty()) sec.blocks.push_back({ReportBlock::Kind::Items, {}, {}, fits, {}});
    if (!m.notes.empty()) sec.blocks.push_back({ReportBlock::Kind::Items, {}, {}, m.notes, {}});
    return sec;
}

} // namespace kvbe
