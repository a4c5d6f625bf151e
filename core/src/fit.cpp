#include "kvbe/fit.h"

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

std::string lower(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

const TierPath* findTier(const std::vector<TierPath>& tiers, const std::string& name) {
    const auto want = lower(name);
    for (const auto& t : tiers)
        if (lower(t.name) == want) return &t;
    auto kind = [&](const char* a, const char* b) {
        for (const auto& t : tiers) {
            const auto n = lower(t.name);
            if (n.find(a) != std::string::npos || n.find(b) != std::string::npos) return &t;
        }
        return static_cast<const TierPath*>(nullptr);
    };
    if (want == "ssd" || want == "nvme" || want == "disk") return kind("nvme", "ssd");
    if (want == "mem" || want == "dram" || want == "cpu") return kind("dram", "mem");
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

} // namespace

Result<FitResult> fitCalibration(const Calibration& c, const CostInputs& base,
                                 const std::vector<TierPath>& nominalTiers,
                                 const FitOptions& options) {
    FitResult out;
    CostInputs unit = base;
    unit.utilisation = 1;
    unit.rampHalfTokens.reset();
    unit.measuredPrefill.reset();
    auto unitModel = CostModel::create(unit);
    if (!unitModel) return unitModel.error();

    // Cold prefill: utilisation, ramp, overhead. Fewer points fit fewer parameters.
    PrefillParams fitted{base.utilisation, base.rampHalfTokens.value_or(0), 0};
    std::vector<PrefillSample> prefill = c.prefill;
    if (prefill.empty()) {
        out.notes.push_back("no cold-prefill measurements: utilisation kept at " +
                            std::to_string(base.utilisation));
    } else {
        std::set<double> lengths;
        for (const auto& s : prefill)
            lengths.insert(s.tokens);
        const bool ramp = options.fitRamp && lengths.size() >= 4;
        const bool overhead = options.fitOverhead && lengths.size() >= 3;
        if (options.fitRamp && !ramp)
            out.notes.push_back("fewer than 4 prompt lengths: no utilisation ramp fitted");
        if (options.fitOverhead && !overhead)
            out.notes.push_back("fewer than 3 prompt lengths: no shared overhead fitted");
        PrefillProblem problem{&*unitModel, &prefill, ramp, overhead};
        Eigen::VectorXd x(problem.inputs());
        const double u0 = std::clamp(base.utilisation, 0.01, 0.99);
        x[0] = std::log(u0 / (1 - u0));
        int i = 1;
        double minT = prefill[0].seconds;
        for (const auto& s : prefill)
            minT = std::min(minT, s.seconds);
        if (ramp) x[i++] = std::log(1024.0);
        if (overhead) x[i] = std::sqrt(0.05 * minT);
        PrefillFunctor functor(problem);
        Eigen::NumericalDiff<PrefillFunctor> numeric(functor);
        Eigen::LevenbergMarquardt<Eigen::NumericalDiff<PrefillFunctor>> lm(numeric);
        lm.setMaxfev(4000);
        lm.setXtol(1e-12);
        lm.setFtol(1e-12);
        const auto status = lm.minimize(x);
        if (status == Eigen::LevenbergMarquardtSpace::ImproperInputParameters)
            return Error{c.source + ": the prefill measurements cannot be fitted"};
        fitted = problem.decode(x);
        for (const auto& s : prefill)
            out.residuals.push_back(
                {"recompute", s.tokens, 0, s.seconds, problem.predict(fitted, s.tokens)});
    }
    out.params.utilisation = fitted.u;
    if (fitted.nHalf > 0) out.params.rampHalfTokens = fitted.nHalf;
    out.params.overheadS = fitted.overhead;

    CostInputs fittedInputs = base;
    fittedInputs.utilisation = std::min(1.0, fitted.u);
    fittedInputs.rampHalfTokens =
        fitted.nHalf > 0 ? std::optional<double>(fitted.nHalf) : std::nullopt;
    fittedInputs.measuredPrefill.reset();
    auto model = CostModel::create(fittedInputs);
    if (!model) return model.error();

    // Tiers: from their transfer samples, then from hits (linear in t_fixed and 1/B).
    std::set<std::string> names;
    for (const auto& t : c.tiers)
        names.insert(t.name);
    for (const auto& h : c.hits)
        names.insert(h.tier);
    for (const auto& name : names) {
        std::optional<double> bandwidth;
        std::optional<double> tFixed;
        double amplification = 1;
        for (const auto& t : c.tiers) {
            if (t.name != name) continue;
            if (t.reads.size() >= 2) {
                std::vector<std::pair<double, double>> pts;
                for (const auto& r : t.reads)
                    pts.emplace_back(r.bytes, r.seconds);
                if (auto f = fitTransfer(pts, c.source + ": tier '" + name + "' reads")) {
                    bandwidth = f->bandwidthBps;
                    tFixed = f->tFixedS;
                } else {
                    out.notes.push_back(f.message());
                }
            } else if (t.readBps) {
                bandwidth = *t.readBps;
            }
        }
        std::vector<const HitSample*> hits;
        for (const auto& h : c.hits)
            if (h.tier == name && h.prefix > 0) hits.push_back(&h);
        const TierPath* nominal = findTier(nominalTiers, name);
        if (!hits.empty()) {
            std::set<double> prefixes;
            for (const auto* h : hits)
                prefixes.insert(h->prefix);
            // y = t_hit − overhead − t_re(N − p, p) = t_fixed + bytes(p) · (1 / B).
            std::vector<HitRow> rows;
            rows.reserve(hits.size());
            for (const auto* h : hits)
                rows.push_back({model->loadBytes(h->prefix), // KV, plus a hybrid's state snapshot
                                h->seconds - fitted.overhead -
                                    model->tRecompute(h->tokens - h->prefix, h->prefix),
                                h->seconds});
            bool solved = false;
            if (prefixes.size() >= 2) {
                const Eigen::Vector2d sol = solveHitLine(rows);
                const bool grows = sol[1] > 0 && std::isfinite(sol[1]);
                if (!bandwidth) {
                    if (grows) {
                        bandwidth = 1 / sol[1];
                        tFixed = sol[0];
                        solved = true;
                    } else {
                        out.notes.push_back(
                            "tier '" + name +
                            "': hit times do not grow with the prefix; bandwidth not fitted");
                    }
                } else if (grows && 1 / sol[1] < *bandwidth) {
                    // The hits saw a slower rate than the probe measured: bytes moved per useful
                    // byte, t_load = t_fixed + kvbytes · amplification / B_probe.
                    amplification = std::min(kMaxAmplification, *bandwidth * sol[1]);
                    tFixed = sol[0];
                    solved = true;
                    char buf[160];
                    std::snprintf(buf, sizeof buf,
                                  "hits saw %.3g GB/s of useful KV against the probe's %.3g GB/s: "
                                  "amplification %.3g",
                                  1e-9 / sol[1], *bandwidth * 1e-9, amplification);
                    out.notes.push_back("tier '" + name + "': " + buf);
                }
            }
            if (!solved) {
                if (!bandwidth && nominal) bandwidth = nominal->bandwidthBps;
                if (!bandwidth) {
                    out.notes.push_back("tier '" + name +
                                        "': one prefix size and no bandwidth known; not fitted");
                    continue;
                }
                double rest = 0, weights = 0;
                for (const auto& r : rows) {
                    rest += (r.y - r.bytes / *bandwidth) / r.tHit;
                    weights += 1 / r.tHit;
                }
                tFixed = rest / weights;
            }
            // Hits faster than the load alone: a fixed cost below 0 is not a cost; it is held at
            // 0, and said, since it decides p*.
            if (tFixed && *tFixed < 0) {
                out.fixedCostHeldAtZero[name] = *tFixed;
                char buf[200];
                std::snprintf(buf, sizeof buf,
                              "the hits were faster than the load alone predicts (they imply a "
                              "fixed cost of %.3g ms); "
                              "t_fixed held at 0",
                              *tFixed * 1e3);
                out.notes.push_back("tier '" + name + "': " + buf);
                tFixed = 0.0;
            }
        }
        if (!bandwidth) {
            if (!nominal) {
                out.notes.push_back("tier '" + name + "': no transfers or hits to fit");
                continue;
            }
            bandwidth = nominal->bandwidthBps;
        }
        if (!tFixed) tFixed = nominal ? nominal->tFixedS : 0.0;
        out.params.tiers[name] = {*bandwidth, *tFixed, amplification};
        const TierPath path{name, *bandwidth, *tFixed, amplification};
        for (const auto* h : hits)
            out.residuals.push_back({name, h->tokens, h->prefix, h->seconds,
                                     fitted.overhead + model->tHit(path, h->tokens, h->prefix)});
        out.breakevenPrefix[name] = model->breakevenPrefix(path);
    }

    double sum = 0;
    for (const auto& r : out.residuals)
        sum += r.relative() * r.relative();
    out.params.rmsRelativeResidual =
        out.residuals.empty() ? 0 : std::sqrt(sum / static_cast<double>(out.residuals.size()));
    char buf[240];
    if (!prefill.empty() && fitted.u >= kUtilisationBoundHigh) {
        std::snprintf(buf, sizeof buf,
                      "utilisation %.3f is at its bound (1): the measured prefills are faster than "
                      "this model can run "
                      "on this GPU; check the model and GPU the file was measured with",
                      fitted.u);
        out.unreliable.emplace_back(buf);
    } else if (!prefill.empty() && fitted.u <= kUtilisationBoundLow) {
        std::snprintf(buf, sizeof buf,
                      "utilisation %.3f is at its bound (0): the measured prefills are far slower "
                      "than this model "
                      "needs on this GPU; check the model and GPU the file was measured with",
                      fitted.u);
        out.unreliable.emplace_back(buf);
    }
    if (out.params.rmsRelativeResidual > kReliableRmsResidual) {
        std::snprintf(
            buf, sizeof buf,
            "rms residual %.0f %% is above %.0f %%: the model does not describe these measurements",
            out.params.rmsRelativeResidual * 100, kReliableRmsResidual * 100);
        out.unreliable.emplace_back(buf);
    }
    return out;
}

Result<PyKvcacheImplied> pyKvcacheImplied(const Calibration& c,
                                          std::optional<double> fallbackKvBytesPerToken) {
    if (c.format != "py-kvcache-v2" || !c.curves.count("f"))
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
    std::vector<TierPath> paths;
    for (const auto& t : out.tiers)
        paths.push_back({t.name, t.bandwidthGBps * 1e9, t.tFixedMs * 1e-3});
    for (const auto& [name, fitted] : p.tiers) {
        const TierPath* match = findTier(paths, name);
        if (!match) continue;
        auto& tier = out.tiers[static_cast<size_t>(match - paths.data())];
        tier.bandwidthGBps = fitted.bandwidthBps / 1e9;
        tier.tFixedMs = fitted.tFixedS * 1e3;
        tier.amplification = fitted.amplification;
        tier.staging = Staging::None; // a fitted bandwidth is what the hit saw, staging included
        tier.measured.clear();
    }
    return out;
}

} // namespace kvbe
