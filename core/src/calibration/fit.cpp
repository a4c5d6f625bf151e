#include "kvbe/calibration/fit.h"
#include "kvbe/files/file_kind.h"

#include "kvbe/base/text.h"
#include "kvbe/scenario/hardware.h"

#include <Eigen/Dense>
#include <unsupported/Eigen/LevenbergMarquardt>
#include <unsupported/Eigen/NumericalDiff>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>

namespace kvbe {
namespace {

// Parameters are mapped so that the optimiser works unconstrained: u = logistic(a) in (0, 1),
// n_half = exp(b), overhead = c².
struct PrefillParams {
    double u = 0.5, nHalf = 0, overhead = 0;
};

struct PrefillProblem {
    const CostModel* unitModel; // utilisation 1, no ramp: its tMiss is F / (peak · t)
    const std::vector<PrefillSample>* samples;
    bool ramp, overhead;

    int inputs() const { return 1 + (ramp ? 1 : 0) + (overhead ? 1 : 0); }
    PrefillParams decode(const Eigen::VectorXd& x) const {
        PrefillParams p;
        p.u = 1 / (1 + std::exp(-x[0]));
        int i = 1;
        if (ramp) p.nHalf = std::exp(std::clamp(x[i++], -20.0, 40.0));
        if (overhead) p.overhead = x[i] * x[i];
        return p;
    }
    double predict(const PrefillParams& p, double n) const {
        const double rampFactor = p.nHalf > 0 ? (n + p.nHalf) / n : 1.0;
        return p.overhead + unitModel->tMiss(n) / p.u * rampFactor;
    }
};

struct PrefillFunctor : Eigen::DenseFunctor<double> {
    const PrefillProblem& problem;
    PrefillFunctor(const PrefillProblem& pr)
        : Eigen::DenseFunctor<double>(pr.inputs(), static_cast<int>(pr.samples->size())),
          problem(pr) {}
    int operator()(const InputType& x, ValueType& f) const {
        const auto p = problem.decode(x);
        for (size_t i = 0; i < problem.samples->size(); ++i) {
            const auto& s = (*problem.samples)[i];
            f[static_cast<Eigen::Index>(i)] =
                (problem.predict(p, s.tokens) - s.seconds) / s.seconds;
        }
        return 0;
    }
};

const TierPath* findTier(const std::vector<TierPath>& tiers, const std::string& name) {
    const auto want = lower(name);
    for (const auto& t : tiers)
        if (lower(t.name) == want) return &t;
    // A kind's word ("ssd", "mem"…): the first tier whose name suggests that kind.
    if (const auto kind = tierKindOfWord(want))
        for (const auto& t : tiers)
            if (nameSuggestsKind(t.name, *kind)) return &t;
    return nullptr;
}

// One hit for the tier step: y = t_hit − overhead − t_re(N − p, p), the bytes loaded, and t_hit.
struct HitRow {
    double bytes = 0, y = 0, tHit = 0;
};

// The hit step's line y = t_fixed + bytes · (1 / B), each row weighted by 1 / t_hit: timing noise
// is relative, and short hits carry t_fixed. Returns (t_fixed, 1 / B), unclamped.
Eigen::Vector2d solveHitLine(const std::vector<HitRow>& rows) {
    const auto n = static_cast<Eigen::Index>(rows.size());
    Eigen::VectorXd yw(n);
    Eigen::MatrixXd aw(n, 2);
    for (Eigen::Index r = 0; r < n; ++r) {
        const auto& h = rows[static_cast<size_t>(r)];
        const double w = 1 / h.tHit;
        yw[r] = w * h.y;
        aw(r, 0) = w;
        aw(r, 1) = w * h.bytes;
    }
    return aw.colPivHouseholderQr().solve(yw);
}

// The cost model at utilisation 1 with no ramp: the cold-prefill fit scales its times.
Result<CostModel> unitCostModel(const CostInputs& base) {
    CostInputs unit = base;
    unit.utilisation = 1;
    unit.rampHalfTokens.reset();
    unit.measuredPrefill.reset();
    return CostModel::create(unit);
}

// Fewer prompt lengths fit fewer parameters: the ramp needs 4, the overhead 3.
PrefillProblem prefillProblem(const CostModel& unitModel, const std::vector<PrefillSample>& prefill,
                              const FitOptions& options, std::vector<std::string>& notes) {
    std::set<double> lengths;
    for (const auto& s : prefill)
        lengths.insert(s.tokens);
    const bool ramp = options.fitRamp && lengths.size() >= 4;
    const bool overhead = options.fitOverhead && lengths.size() >= 3;
    if (options.fitRamp && !ramp)
        notes.push_back("fewer than 4 prompt lengths: no utilisation ramp fitted");
    if (options.fitOverhead && !overhead)
        notes.push_back("fewer than 3 prompt lengths: no shared overhead fitted");
    return {&unitModel, &prefill, ramp, overhead};
}

// Levenberg–Marquardt from the scenario's utilisation, n_half = 1024 and an overhead of 5 % of
// the shortest prefill; none where Eigen finds the problem improper.
std::optional<PrefillParams> solvePrefill(const PrefillProblem& problem, double utilisation) {
    const auto& prefill = *problem.samples;
    Eigen::VectorXd x(problem.inputs());
    const double u0 = std::clamp(utilisation, 0.01, 0.99);
    x[0] = std::log(u0 / (1 - u0));
    int i = 1;
    double minT = prefill[0].seconds;
    for (const auto& s : prefill)
        minT = std::min(minT, s.seconds);
    if (problem.ramp) x[i++] = std::log(1024.0);
    if (problem.overhead) x[i] = std::sqrt(0.05 * minT);
    PrefillFunctor functor(problem);
    Eigen::NumericalDiff<PrefillFunctor> numeric(functor);
    Eigen::LevenbergMarquardt<Eigen::NumericalDiff<PrefillFunctor>> lm(numeric);
    lm.setMaxfev(4000);
    lm.setXtol(1e-12);
    lm.setFtol(1e-12);
    const auto status = lm.minimize(x);
    if (status == Eigen::LevenbergMarquardtSpace::ImproperInputParameters) return std::nullopt;
    return problem.decode(x);
}

// Cold prefill: utilisation, ramp and overhead, with their residuals. No measurements keep the
// scenario's utilisation and ramp.
Result<PrefillParams> fitPrefill(const Calibration& c, const CostInputs& base,
                                 const CostModel& unitModel, const FitOptions& options,
                                 FitResult& out) {
    if (c.prefill.empty()) {
        out.notes.push_back("no cold-prefill measurements: utilisation kept at " +
                            std::to_string(base.utilisation));
        return PrefillParams{base.utilisation, base.rampHalfTokens.value_or(0), 0};
    }
    const PrefillProblem problem = prefillProblem(unitModel, c.prefill, options, out.notes);
    const auto fitted = solvePrefill(problem, base.utilisation);
    if (!fitted) return Error{c.source + ": the prefill measurements cannot be fitted"};
    for (const auto& s : c.prefill)
        out.residuals.push_back(
            {"recompute", s.tokens, 0, s.seconds, problem.predict(*fitted, s.tokens)});
    return *fitted;
}

// The scenario's inputs with the fitted utilisation and ramp: the model the tier step fits under.
CostInputs withPrefillFit(const CostInputs& base, const PrefillParams& fitted) {
    CostInputs inputs = base;
    inputs.utilisation = std::min(1.0, fitted.u);
    inputs.rampHalfTokens = fitted.nHalf > 0 ? std::optional<double>(fitted.nHalf) : std::nullopt;
    inputs.measuredPrefill.reset();
    return inputs;
}

// Every tier named by a transfer sample or a hit.
std::set<std::string> tierNames(const Calibration& c) {
    std::set<std::string> names;
    for (const auto& t : c.tiers)
        names.insert(t.name);
    for (const auto& h : c.hits)
        names.insert(h.tier);
    return names;
}

// What the tier step knows of one tier so far; unset values fall back on the nominal tier.
struct TierEstimate {
    std::optional<double> bandwidth;
    std::optional<double> tFixed;
    double amplification = 1;
    bool fixedFromHits = false;    // t_fixed came from hits, so it holds the per-layer loads
    bool bandwidthNominal = false; // the bandwidth is the nominal tier's, not measured
};

// From the tier's transfer samples: a line through two or more reads, else the read rate given.
TierEstimate fromTransfers(const Calibration& c, const std::string& name,
                           std::vector<std::string>& notes) {
    TierEstimate e;
    for (const auto& t : c.tiers) {
        if (t.name != name) continue;
        if (t.reads.size() >= 2) {
            std::vector<std::pair<double, double>> pts;
            for (const auto& r : t.reads)
                pts.emplace_back(r.bytes, r.seconds);
            if (auto f = fitTransfer(pts, c.source + ": tier '" + name + "' reads")) {
                e.bandwidth = f->bandwidthBps;
                e.tFixed = f->tFixedS;
            } else {
                notes.push_back(f.message());
            }
        } else if (t.readBps) {
            e.bandwidth = *t.readBps;
        }
    }
    return e;
}

// Two or more prefix sizes: the hit line gives t_fixed, and the bandwidth where the transfers
// gave none, or the amplification where the hits saw less than the probe measured. Returns
// whether it solved for t_fixed.
bool solveFromHitLine(const std::string& name, const std::vector<HitRow>& rows, TierEstimate& e,
                      std::vector<std::string>& notes) {
    const Eigen::Vector2d sol = solveHitLine(rows);
    const bool grows = sol[1] > 0 && std::isfinite(sol[1]);
    if (!e.bandwidth) {
        if (grows) {
            e.bandwidth = 1 / sol[1];
            e.tFixed = sol[0];
            return true;
        }
        notes.push_back("tier '" + name +
                        "': hit times do not grow with the prefix; bandwidth not fitted");
    } else if (grows && 1 / sol[1] < *e.bandwidth) {
        // The hits saw a slower rate than the probe measured: bytes moved per useful byte,
        // t_load = t_fixed + kvbytes · amplification / B_probe.
        e.amplification = std::min(kMaxAmplification, *e.bandwidth * sol[1]);
        e.tFixed = sol[0];
        char buf[160];
        std::snprintf(buf, sizeof buf,
                      "hits saw %.3g GB/s of useful KV against the probe's %.3g GB/s: "
                      "amplification %.3g",
                      1e-9 / sol[1], *e.bandwidth * 1e-9, e.amplification);
        notes.push_back("tier '" + name + "': " + buf);
        return true;
    }
    return false;
}

// Where the hit line did not solve: t_fixed alone, the weighted mean of what the hits leave
// over at the known bandwidth (the transfers', else the nominal tier's). Returns false where no
// bandwidth is known.
bool fixedCostAtBandwidth(const std::string& name, const std::vector<HitRow>& rows,
                          const TierPath* nominal, TierEstimate& e,
                          std::vector<std::string>& notes) {
    if (!e.bandwidth && nominal) {
        e.bandwidth = nominal->bandwidthBps;
        e.bandwidthNominal = true;
    }
    if (!e.bandwidth) {
        notes.push_back("tier '" + name + "': one prefix size and no bandwidth known; not fitted");
        return false;
    }
    double rest = 0, weights = 0;
    for (const auto& r : rows) {
        rest += (r.y - r.bytes / *e.bandwidth) / r.tHit;
        weights += 1 / r.tHit;
    }
    e.tFixed = rest / weights;
    return true;
}

// Hits faster than the load alone: a fixed cost below 0 is not a cost; it is held at 0, and
// said, since it decides p*.
void holdFixedCostAtZero(const std::string& name, TierEstimate& e, FitResult& out) {
    if (!e.tFixed || *e.tFixed >= 0) return;
    out.fixedCostHeldAtZero[name] = *e.tFixed;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "the hits were faster than the load alone predicts (they imply a "
                  "fixed cost of %.3g ms); "
                  "t_fixed held at 0",
                  *e.tFixed * 1e3);
    out.notes.push_back("tier '" + name + "': " + buf);
    e.tFixed = 0.0;
}

// The hit step, linear in t_fixed and 1 / B. Returns false where the tier cannot be fitted.
bool fitFromHits(const std::string& name, const std::vector<const HitSample*>& hits,
                 const CostModel& model, double overhead, const TierPath* nominal, TierEstimate& e,
                 FitResult& out) {
    std::set<double> prefixes;
    for (const auto* h : hits)
        prefixes.insert(h->prefix);
    // y = t_hit − overhead − t_re(N − p, p) = t_fixed + bytes(p) · (1 / B).
    std::vector<HitRow> rows;
    rows.reserve(hits.size());
    for (const auto* h : hits)
        rows.push_back({model.loadBytes(h->prefix), // KV, plus a hybrid's state snapshot
                        h->seconds - overhead - model.tRecompute(h->tokens - h->prefix, h->prefix),
                        h->seconds});
    const bool solved = prefixes.size() >= 2 && solveFromHitLine(name, rows, e, out.notes);
    if (!solved && !fixedCostAtBandwidth(name, rows, nominal, e, out.notes)) return false;
    holdFixedCostAtZero(name, e, out);
    e.fixedFromHits = true;
    return true;
}

// One tier: transfers, then hits, then the nominal tier for what they left unset; its fitted
// values, hit residuals and p*.
void fitTier(const Calibration& c, const std::string& name,
             const std::vector<TierPath>& nominalTiers, const CostModel& model, double overhead,
             FitResult& out) {
    TierEstimate e = fromTransfers(c, name, out.notes);
    std::vector<const HitSample*> hits;
    for (const auto& h : c.hits)
        if (h.tier == name && h.prefix > 0) hits.push_back(&h);
    const TierPath* nominal = findTier(nominalTiers, name);
    if (!hits.empty() && !fitFromHits(name, hits, model, overhead, nominal, e, out)) return;
    if (!e.bandwidth) {
        if (!nominal) {
            out.notes.push_back("tier '" + name + "': no transfers or hits to fit");
            return;
        }
        e.bandwidth = nominal->bandwidthBps;
        e.bandwidthNominal = true;
    }
    if (e.bandwidthNominal) out.bandwidthNominal.insert(name);
    if (!e.tFixed) e.tFixed = nominal ? model.tFixed(*nominal) : 0.0;
    FittedTier fitted{*e.bandwidth, *e.tFixed, e.amplification};
    if (e.fixedFromHits) {
        // One model: the per-layer form (fixed_cost.h). Transfers and presets keep a constant.
        const auto line = fitFixedCostLine({{model.kvStateLayers(), *e.tFixed}});
        fitted.tLayerS = line.tLayerS;
        fitted.layers = model.kvStateLayers();
        out.fixedCostForm = line.form;
        out.fixedCostWhy = line.why;
        out.fixedFromHits.insert(name);
    }
    out.params.tiers[name] = fitted;
    const TierPath path{name, *e.bandwidth, *e.tFixed, e.amplification};
    for (const auto* h : hits)
        out.residuals.push_back({name, h->tokens, h->prefix, h->seconds,
                                 overhead + model.tHit(path, h->tokens, h->prefix)});
    out.breakevenPrefix[name] = model.breakevenPrefix(path);
}

double rmsRelative(const std::vector<FitResidual>& residuals) {
    double sum = 0;
    for (const auto& r : residuals)
        sum += r.relative() * r.relative();
    return residuals.empty() ? 0 : std::sqrt(sum / static_cast<double>(residuals.size()));
}

// Why the fit should not be trusted: a fitted utilisation at a bound of (0, 1), residuals above
// kReliableRmsResidual.
std::vector<std::string> unreliability(bool prefillFitted, double utilisation, double rmsResidual) {
    std::vector<std::string> why;
    char buf[240];
    if (prefillFitted && utilisation >= kUtilisationBoundHigh) {
        std::snprintf(buf, sizeof buf,
                      "utilisation %.3f is at its bound (1): the measured prefills are faster than "
                      "this model can run "
                      "on this GPU; check the model and GPU the file was measured with",
                      utilisation);
        why.emplace_back(buf);
    } else if (prefillFitted && utilisation <= kUtilisationBoundLow) {
        std::snprintf(buf, sizeof buf,
                      "utilisation %.3f is at its bound (0): the measured prefills are far slower "
                      "than this model "
                      "needs on this GPU; check the model and GPU the file was measured with",
                      utilisation);
        why.emplace_back(buf);
    }
    if (rmsResidual > kReliableRmsResidual) {
        std::snprintf(
            buf, sizeof buf,
            "rms residual %.0f %% is above %.0f %%: the model does not describe these measurements",
            rmsResidual * 100, kReliableRmsResidual * 100);
        why.emplace_back(buf);
    }
    return why;
}

} // namespace

Result<FitResult> fitCalibration(const Calibration& c, const CostInputs& base,
                                 const std::vector<TierPath>& nominalTiers,
                                 const FitOptions& options) {
    FitResult out;
    auto unitModel = unitCostModel(base);
    if (!unitModel) return unitModel.error();

    const auto fitted = fitPrefill(c, base, *unitModel, options, out);
    if (!fitted) return fitted.error();
    out.params.utilisation = fitted->u;
    if (fitted->nHalf > 0) out.params.rampHalfTokens = fitted->nHalf;
    out.params.overheadS = fitted->overhead;

    auto model = CostModel::create(withPrefillFit(base, *fitted));
    if (!model) return model.error();
    for (const auto& name : tierNames(c))
        fitTier(c, name, nominalTiers, *model, fitted->overhead, out);
    out.params.fittedOn = {{base.model.id, model->kvStateLayers()}};
    if (out.fixedCostForm) {
        out.fixedCostNote = out.notes.size();
        out.notes.push_back("fixed cost: " + out.fixedCostWhy);
    }

    out.params.rmsRelativeResidual = rmsRelative(out.residuals);
    out.unreliable = unreliability(!c.prefill.empty(), fitted->u, out.params.rmsRelativeResidual);
    return out;
}

std::map<std::string, FixedCostLine> fixedCostsAcrossModels(const std::vector<ModelFit>& fits) {
    std::map<std::string, std::vector<FixedCostSample>> samples;
    for (const auto& f : fits)
        for (const auto& name : f.fit.fixedFromHits)
            if (const auto it = f.fit.params.tiers.find(name); it != f.fit.params.tiers.end())
                samples[name].push_back({f.model.layers, it->second.tFixedS});
    std::map<std::string, FixedCostLine> out;
    for (const auto& [name, s] : samples)
        out[name] = fitFixedCostLine(s);
    return out;
}

FittedParameters withFixedCostLines(const ModelFit& fit,
                                    const std::map<std::string, FixedCostLine>& lines,
                                    const std::vector<ModelFit>& fits) {
    FittedParameters p = fit.fit.params;
    for (auto& [name, tier] : p.tiers) {
        const auto it = lines.find(name);
        if (it == lines.end()) continue;
        tier.tFixedS = it->second.at(fit.model.layers);
        tier.tLayerS = it->second.tLayerS;
        tier.layers = fit.model.layers;
    }
    p.fittedOn.clear();
    for (const auto& f : fits)
        p.fittedOn.push_back(f.model);
    return p;
}

Result<PyKvcacheImplied> pyKvcacheImplied(const Calibration& c,
                                          std::optional<double> fallbackKvBytesPerToken) {
    if (calibrationFormatOf(c.format) != CalibrationFormat::PyKvcacheV2 || !c.curves.count("f"))
        return Error{c.source + ": not a py-kvcache v2 file; only its curves imply B* and p*"};
    PyKvcacheImplied out;
    out.kvBytesPerToken = c.kvBytesPerToken.value_or(fallbackKvBytesPerToken.value_or(0));
    if (!(out.kvBytesPerToken > 0))
        return Error{
            c.source +
            ": no kv_bytes_per_token, and no model to take it from; B* needs the KV bytes"};
    const CurveKnots& f = c.curves.at("f");
    for (const auto& [curve, tier] : {std::pair{"g_ssd", "ssd"}, std::pair{"g_mem", "mem"}}) {
        const auto it = c.curves.find(curve);
        if (it == c.curves.end()) continue;
        const CurveKnots& g = it->second;
        ImpliedTier t;
        t.tier = tier;
        t.curve = curve;
        // t_fixed and bandwidth: the fit's hit step on the knots, p > 0 (a hit of p = N tokens
        // recomputes nothing, and no model means no shared overhead is taken out).
        std::vector<HitRow> rows;
        std::set<double> lengths;
        for (const auto& [m, s] : g.knots)
            if (m > 0 && s > 0) {
                rows.push_back({out.kvBytesPerToken * m, s, s});
                lengths.insert(m);
            }
        t.tFixedS = g.floorS;
        if (lengths.size() >= 2) {
            const Eigen::Vector2d sol = solveHitLine(rows);
            if (sol[1] > 0 && std::isfinite(1 / sol[1]) && std::isfinite(sol[0])) {
                t.bandwidthBps = 1 / sol[1];
                t.tFixedS = std::max(0.0, sol[0]);
                t.tFixedFitted = true;
            }
        }
        auto point = [&](double m, double fs, double gs, bool golden) {
            ImpliedPoint p{m, golden, fs, gs, std::nullopt};
            const double b = fs > t.tFixedS ? out.kvBytesPerToken * m / (fs - t.tFixedS) : 0;
            if (b > 0 && std::isfinite(b)) p.breakevenBps = b;
            t.points.push_back(p);
        };
        const double lo = std::max(f.knots.front().first, g.knots.front().first);
        const double hi = std::min(f.knots.back().first, g.knots.back().first);
        std::set<double> measured;
        for (const auto* k : {&f, &g})
            for (const auto& [m, s] : k->knots)
                if (m > 0 && m >= lo && m <= hi) measured.insert(m);
        for (double m : measured)
            point(m, interpolateKnots(f, m), interpolateKnots(g, m), false);
        for (const auto& gp : c.golden)
            if (gp.tokens > 0)
                point(gp.tokens, gp.f, tier == std::string("ssd") ? gp.gSsd : gp.gMem, true);
        t.pStarTokens = pyKvcacheRuleThreshold(f, g);
        t.paysWithinKnots = hi >= lo && interpolateKnots(f, hi) > interpolateKnots(g, hi);
        out.tiers.push_back(std::move(t));
    }
    return out;
}

Scenario adoptFit(const Scenario& s, const FittedParameters& p) {
    Scenario out = s;
    if (p.utilisation) out.utilisation = std::min(1.0, *p.utilisation);
    out.rampHalfTokens = p.rampHalfTokens;
    if (!p.fittedOn.empty()) out.fittedOn = p.fittedOn;
    std::vector<TierPath> paths;
    for (const auto& t : out.tiers)
        paths.push_back({t.name, t.bandwidthGBps * 1e9, t.tFixedMs * 1e-3});
    for (const auto& [name, fitted] : p.tiers) {
        const TierPath* match = findTier(paths, name);
        if (!match) continue;
        auto& tier = out.tiers[static_cast<size_t>(match - paths.data())];
        tier.bandwidthGBps = fitted.bandwidthBps / 1e9;
        tier.tFixedMs = std::max(0.0, fitted.t0()) * 1e3;
        tier.tLayerUs = fitted.tLayerS * 1e6;
        tier.amplification = fitted.amplification;
        tier.staging = Staging::None; // a fitted bandwidth is what the hit saw, staging included
        tier.measured.clear();
    }
    return out;
}

} // namespace kvbe
