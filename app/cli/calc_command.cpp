// kvbe-cli calc, models, gpus, tiers.
#include "commands.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/published.h"
#include "kvbe/cost/report.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <cmath>
#include <iostream>
#include <memory>

namespace kvbe::cli {
namespace {

struct CalcOptions {
    std::string model, gpu, peak, util, flops, kvDtype, stateDtype, params, lengths, fraction,
        scenario;
    int tp = 0;
    bool sharedPath = false;
    bool allowPastContext = false;
    std::vector<std::string> tiers;
    std::vector<std::string> amplification;
    std::string format = "table";
};

// A plain number for a flag, named by it: core's parseNumber.
Result<double> parseNumber(const std::string& text, const std::string& flag,
                           const std::string& expected) {
    auto v = kvbe::parseNumber(text);
    if (!v) return Error{flag + " '" + text + "': expected " + expected};
    return *v;
}

// --util 0.5 or 50%: core's parseFraction, above 0.
Result<double> parseUtilisation(const std::string& text) {
    auto u = parseFraction(text, false);
    if (!u) return Error{"--util " + u.message()};
    return *u;
}

// --params 3.21e9 or 3.21B / 70B / 1.2T: core's parseParamCount, named by its flag.
Result<double> parseParams(const std::string& text) {
    auto p = parseParamCount(text);
    if (!p) return Error{"--params " + p.message()};
    return *p;
}

// An amplification factor as typed after '×' / 'x' or given to --amplification.
Result<double> parseAmplification(const std::string& text, const std::string& flag) {
    const std::string expected = "bytes moved per useful byte, from 1 to 1000, e.g. 2.3";
    auto a = parseNumber(text, flag, expected);
    if (!a) return a.error();
    if (*a < 1 || *a > kMaxAmplification)
        return Error{flag + ": amplification " + text + "; expected " + expected +
                     " (1 means the tier moves only the useful bytes)"};
    return *a;
}

// Splits "13.5@1×2.3" (or "13.5@1x2.3") into "13.5@1" and "2.3"; no factor leaves `amp` empty.
bool splitAmplification(std::string& text, std::string& amp) {
    static const std::string times = "\xC3\x97"; // U+00D7 MULTIPLICATION SIGN
    size_t at = text.rfind(times);
    size_t len = times.size();
    if (at == std::string::npos) {
        at = text.find_last_of("xX");
        len = 1;
    }
    if (at == std::string::npos) return false;
    amp = text.substr(at + len);
    text = text.substr(0, at);
    return true;
}

// --tier KEY[×AMP] or --tier NAME=GBPS[@FIXED_MS][×AMP]
Result<TierConfig> parseTier(const std::string& text, const Presets& presets) {
    const std::string form = "KEY[×AMP] or NAME=GBPS[@FIXED_MS][×AMP]";
    const auto eq = text.find('=');
    if (eq == std::string::npos) {
        if (const auto* spec = presets.findTier(text)) return tierFromPreset(*spec);
        std::string key = text, amp;
        const auto* spec = splitAmplification(key, amp) ? presets.findTier(key) : nullptr;
        if (!spec)
            return Error{"--tier '" + text + "': not a tier preset; expected one of " +
                         presets.tierKeys() + ", or " + form};
        TierConfig t = tierFromPreset(*spec);
        auto a = parseAmplification(amp, "--tier " + key);
        if (!a) return a.error();
        t.amplification = *a;
        return t;
    }
    TierConfig t;
    t.name = text.substr(0, eq);
    if (t.name.empty()) return Error{"--tier '" + text + "': the name before '=' is empty"};
    std::string rest = text.substr(eq + 1);
    std::string fixed, amp;
    const bool amplified = splitAmplification(rest, amp);
    if (auto at = rest.find('@'); at != std::string::npos) {
        fixed = rest.substr(at + 1);
        rest = rest.substr(0, at);
    }
    auto bw = parseBandwidthGBps(rest);
    if (!bw) return Error{"--tier " + t.name + ": " + bw.message()};
    t.bandwidthGBps = *bw;
    if (!fixed.empty()) {
        auto f = parseNumber(fixed, "--tier " + t.name, "a fixed cost in ms after '@'");
        if (!f) return f.error();
        if (*f < 0 || *f > 1e7)
            return Error{"--tier " + t.name + ": t_fixed " + fixed +
                         " ms; expected 0 to 10,000,000 ms"};
        t.tFixedMs = *f;
    }
    if (amplified) {
        auto a = parseAmplification(amp, "--tier " + t.name);
        if (!a) return a.error();
        t.amplification = *a;
    }
    return t;
}

// --amplification AMP (every tier) or NAME=AMP (the tier of that name or preset key).
Status applyAmplification(const std::string& text, std::vector<TierConfig>& tiers) {
    const auto eq = text.find('=');
    if (eq == std::string::npos) {
        auto a = parseAmplification(text, "--amplification");
        if (!a) return a.error();
        for (auto& t : tiers)
            t.amplification = *a;
        return Ok{};
    }
    const std::string name = text.substr(0, eq);
    auto a = parseAmplification(text.substr(eq + 1), "--amplification " + name);
    if (!a) return a.error();
    bool found = false;
    std::string names;
    for (auto& t : tiers) {
        names += (names.empty() ? "'" : ", '") + t.name + "'";
        if (t.name == name || t.preset == name) {
            t.amplification = *a;
            found = true;
        }
    }
    if (!found)
        return Error{"--amplification " + text + ": no tier named '" + name + "'; the tiers are " +
                     (names.empty() ? std::string("none") : names)};
    return Ok{};
}

int runCalc(const CalcOptions& o) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return fail(presets.message());
    auto scenario =
        o.scenario.empty() ? defaultScenario(*presets) : loadScenario(o.scenario, *presets);
    if (!scenario) return fail(scenario.message());
    Scenario s = *scenario;

    if (!o.model.empty()) s.model = o.model;
    if (!o.gpu.empty()) {
        if (!presets->findGpu(o.gpu))
            return fail("--gpu '" + o.gpu + "': not a GPU preset; expected one of " +
                        presets->gpuKeys());
        s.gpu = o.gpu;
    }
    if (!o.peak.empty()) {
        auto v =
            parseNumber(o.peak, "--peak-tflops", "a positive number of dense TFLOP/s, e.g. 989");
        if (!v) return fail(v.message());
        if (*v <= 0 || *v > 1e6)
            return fail("--peak-tflops " + o.peak +
                        ": expected a positive number of TFLOP/s, at most 1,000,000");
        s.peakTflops = *v;
    }
    if (!o.util.empty()) {
        auto u = parseUtilisation(o.util);
        if (!u) return fail(u.message());
        s.utilisation = *u;
    }
    if (!o.flops.empty()) s.flopModel = *parseFlopModel(o.flops);
    if (!o.kvDtype.empty()) s.kvDtype = parseKvDtype(o.kvDtype);
    if (!o.stateDtype.empty()) s.stateDtype = parseKvDtype(o.stateDtype);
    if (!o.params.empty()) {
        auto p = parseParams(o.params);
        if (!p) return fail(p.message());
        s.paramsOverride = *p;
    }
    if (o.tp > 0) s.tensorParallel = o.tp;
    if (o.sharedPath) s.sharedPath = true;
    if (!o.tiers.empty()) {
        s.tiers.clear();
        for (const auto& t : o.tiers) {
            auto tier = parseTier(t, *presets);
            if (!tier) return fail(tier.message());
            s.tiers.push_back(*tier);
        }
    }
    for (const auto& a : o.amplification)
        if (auto st = applyAmplification(a, s.tiers); !st) return fail(st.message());
    double fraction = s.cachedFraction;
    if (!o.fraction.empty()) {
        auto f = parseFraction(o.fraction);
        if (!f) return fail("--fraction " + f.message());
        fraction = *f;
    }

    const std::string where = o.scenario.empty() ? std::string() : o.scenario + ": ";
    auto model = resolveModel(s.model, *presets);
    if (!model) return fail(where + model.message());
    if (auto why = tensorParallelProblem(*model, s.tensorParallel))
        return fail(
            (o.tp > 0 ? "--tp " + std::to_string(o.tp) + ": " : where + "tensor_parallel: ") +
            *why);

    const double context = model->contextLimit;
    std::vector<double> lengths;
    if (!o.lengths.empty()) {
        auto l = parseTokenList(o.lengths);
        if (!l) return fail("--lengths: " + l.message());
        lengths = *l;
        for (double n : lengths)
            if (n > context && !o.allowPastContext)
                return fail("--lengths: " + formatTokens(n) + " tokens is past the context of " +
                            model->id + " (" + formatTokens(context) +
                            " tokens, its max_position_embeddings), so no such prompt exists; pass "
                            "--allow-past-context to extrapolate anyway (those rows are flagged)");
    } else {
        // The default lengths stop at the model's context, which is the last row.
        for (double n : {1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0})
            if (n < context) lengths.push_back(n);
        lengths.push_back(context);
    }

    auto eval = evaluate(s, *presets, *model);
    if (!eval) return fail(where + eval.message());
    const auto report = makeCalcReport(*eval, lengths, fraction);
    // The study's published figures for this model and GPU, beside the model's (not in CSV,
    // whose rows are one length each).
    auto refs = builtinPublishedReferences(*presets);
    if (!refs) return fail(refs.message());
    std::vector<std::pair<const PublishedReference*, std::vector<PublishedComparison>>> published;
    for (const auto& ref : *refs)
        if (auto rows = comparePublished(matchingPoints(ref, *eval), *eval); !rows.empty())
            published.emplace_back(&ref, std::move(rows));
    if (o.format == "json") {
        auto j = calcJson(report);
        j["published"] = nlohmann::json::array();
        for (const auto& [ref, rows] : published)
            for (const auto& r : rows)
                j["published"].push_back(
                    {{"id", r.point.id},
                     {"reference", ref->file},
                     {"quantity", std::string(toString(r.point.quantity))},
                     {"tier", r.point.tier},
                     {"tokens",
                      r.point.tokens ? nlohmann::json(*r.point.tokens) : nlohmann::json(nullptr)},
                     {"published", r.point.value},
                     {"published_text", r.point.text},
                     {"source", r.point.source},
                     {"model", r.model ? nlohmann::json(*r.model) : nlohmann::json(nullptr)},
                     {"model_tier", r.modelTier}});
        std::cout << dumpJson(j, 2) << "\n";
    } else if (o.format == "csv") {
        std::cout << calcCsv(report);
    } else {
        std::cout << calcTable(report);
        for (const auto& [ref, rows] : published)
            std::cout << "\n" << publishedComparisonTable("Published (" + ref->name + "):", rows);
    }
    return kExitOk;
}

template <class JsonFn, class TableFn>
int runListing(const std::string& format, JsonFn toJson, TableFn toTable) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return fail(presets.message());
    if (format == "json")
        std::cout << dumpJson(toJson(*presets), 2) << "\n";
    else
        std::cout << toTable(*presets);
    return kExitOk;
}

} // namespace

void addCalcCommands(CLI::App& app, std::function<int()>& run) {
    auto o = std::make_shared<CalcOptions>();
    auto* calc = app.add_subcommand(
        "calc", "Break-even bandwidth, prefix length, TTFT and speedup for a scenario");
    calc->add_option("--model", o->model,
                     "Preset id (meta-llama/Llama-3.2-3B), config.json, folder or HF cache entry");
    calc->add_option("--gpu", o->gpu, "GPU preset key (see `kvbe-cli gpus`)");
    calc->add_option("--peak-tflops", o->peak, "Dense peak in TFLOP/s (overrides the GPU preset)");
    calc->add_option("--util", o->util, "Achieved utilisation, 0 < u <= 1 (0.5 or 50%)");
    calc->add_option("--flops", o->flops, "FLOP model")
        ->check(CLI::IsMember({"simple", "detailed"}));
    calc->add_option("--kv-dtype", o->kvDtype, "KV cache dtype (default: the model's torch_dtype)")
        ->check(CLI::IsMember({"bf16", "fp16", "fp8", "int8", "fp32"}));
    calc->add_option("--state-dtype", o->stateDtype,
                     "Hybrid models: the Mamba / linear-attention state dtype (default: the "
                     "config's mamba_ssm_cache_dtype, else the model's dtype)")
        ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
    calc->add_option("--params", o->params, "Parameter count P of the simple model (3.21e9, 70B)");
    calc->add_option(
            "--tp", o->tp,
            "Tensor parallel degree: the query heads must divide by it, and the KV heads too "
            "(or it by them, when it exceeds them)")
        ->check(CLI::Range(1, 1024));
    calc->add_flag("--shared-path", o->sharedPath,
                   "The TP GPUs share one storage path (each sees B/t)");
    calc->add_option(
        "--tier", o->tiers,
        "Tier preset key, or NAME=GBPS[@FIXED_MS]; either may end in ×AMP (or xAMP), the "
        "bytes moved per useful byte; repeatable");
    calc->add_option(
        "--amplification", o->amplification,
        "Bytes moved per useful byte (>= 1): AMP for every tier, or NAME=AMP for one; repeatable");
    calc->add_option("--lengths", o->lengths,
                     "Prompt lengths, e.g. 1024,8k,80k (at most the model's context)");
    calc->add_flag(
        "--allow-past-context", o->allowPastContext,
        "Accept lengths past the model's context; those rows are flagged in every format");
    calc->add_option("--fraction", o->fraction, "Cached fraction for t_hit and speedup (0..1)");
    calc->add_option("--scenario", o->scenario,
                     "Start from a .kvbe.json scenario (flags override it)");
    calc->add_option("--format", o->format, "Output format")
        ->check(CLI::IsMember({"table", "csv", "json"}));
    calc->callback([o, &run] { run = [o] { return runCalc(*o); }; });

    auto format = std::make_shared<std::string>("table");
    auto* models =
        app.add_subcommand("models", "List the model presets with their KV and parameter figures");
    auto* gpus = app.add_subcommand("gpus", "List the GPU presets with peaks and host links");
    auto* tiers =
        app.add_subcommand("tiers", "List the tier presets with bandwidths and fixed costs");
    for (auto* sub : {models, gpus, tiers})
        sub->add_option("--format", *format, "Output format")
            ->check(CLI::IsMember({"table", "json"}));
    models->callback([format, &run] {
        run = [format] { return runListing(*format, modelsJson, modelsTable); };
    });
    gpus->callback(
        [format, &run] { run = [format] { return runListing(*format, gpusJson, gpusTable); }; });
    tiers->callback(
        [format, &run] { run = [format] { return runListing(*format, tiersJson, tiersTable); }; });
}

} // namespace kvbe::cli
