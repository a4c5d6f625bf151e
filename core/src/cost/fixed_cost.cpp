#include "kvbe/cost/fixed_cost.h"

#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <set>

namespace kvbe {

std::string_view toString(FixedCostForm f) {
    switch (f) {
    case FixedCostForm::Constant:
        return "constant";
    case FixedCostForm::PerLayer:
        return "per layer";
    case FixedCostForm::Both:
        return "t0 + per layer";
    }
    return "constant";
}

std::vector<FittedModel> readFittedOn(const FieldReader& r, const nlohmann::json& obj,
                                      const std::string& key, const std::string& path) {
    std::vector<FittedModel> out;
    if (!obj.contains(key) || obj[key].is_null()) return out;
    const auto& a = r.array(obj, key, path);
    for (size_t i = 0; i < a.size(); ++i) {
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (!a[i].is_object()) r.fail(at, "an object with model and layers", &a[i]);
        FittedModel m;
        m.model = r.string(a[i], "model", at + ".model").value_or("");
        if (m.model.empty()) r.fail(at + ".model", "the model's id", nullptr);
        const auto layers =
            r.number(a[i], "layers", at + ".layers", 1, 1e6, "a whole number of layers, 1 or more");
        if (!layers || std::floor(*layers) != *layers)
            r.fail(at + ".layers", "a whole number of layers, 1 or more",
                   a[i].contains("layers") ? &a[i]["layers"] : nullptr);
        m.layers = static_cast<int>(*layers);
        out.push_back(std::move(m));
    }
    return out;
}

nlohmann::json fittedOnJson(const std::vector<FittedModel>& models) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& m : models)
        a.push_back({{"model", m.model}, {"layers", m.layers}});
    return a;
}

namespace {

// Through the origin: t_fixed = layers · t_layer, least squares.
double perLayerOnly(const std::vector<FixedCostSample>& samples) {
    double xy = 0, xx = 0;
    for (const auto& s : samples) {
        xy += s.layers * s.tFixedS;
        xx += static_cast<double>(s.layers) * s.layers;
    }
    return xx > 0 ? xy / xx : 0;
}

double mean(const std::vector<FixedCostSample>& samples) {
    double sum = 0;
    for (const auto& s : samples)
        sum += s.tFixedS;
    return samples.empty() ? 0 : sum / static_cast<double>(samples.size());
}

} // namespace

FixedCostLine fitFixedCostLine(const std::vector<FixedCostSample>& samples) {
    FixedCostLine out;
    std::set<int> depths;
    for (const auto& s : samples)
        if (s.layers > 0) depths.insert(s.layers);
    if (depths.size() < 2) {
        out.form = FixedCostForm::PerLayer;
        out.tLayerS = perLayerOnly(samples);
        out.why = kOneModelFixedCostForm;
        return out;
    }
    const auto n = static_cast<Eigen::Index>(samples.size());
    Eigen::MatrixXd a(n, 2);
    Eigen::VectorXd y(n);
    for (Eigen::Index r = 0; r < n; ++r) {
        const auto& s = samples[static_cast<size_t>(r)];
        a(r, 0) = 1;
        a(r, 1) = s.layers;
        y[r] = s.tFixedS;
    }
    const Eigen::Vector2d sol = a.colPivHouseholderQr().solve(y);
    char buf[320];
    if (sol[0] >= 0 && sol[1] >= 0) {
        out.form = FixedCostForm::Both;
        out.t0S = sol[0];
        out.tLayerS = sol[1];
        std::snprintf(buf, sizeof buf,
                      "t0 and t_layer both fitted (least squares on [1, layers]) to the fixed "
                      "costs of %zu models with %zu layer counts",
                      samples.size(), depths.size());
    } else if (sol[0] < 0) {
        out.form = FixedCostForm::PerLayer;
        out.tLayerS = perLayerOnly(samples);
        std::snprintf(buf, sizeof buf,
                      "fixed cost per layer (t0 = 0): the %zu models asked for a negative t0 "
                      "(%.3g ms), so t_layer alone was fitted",
                      samples.size(), sol[0] * 1e3);
    } else {
        out.form = FixedCostForm::Constant;
        out.t0S = mean(samples);
        std::snprintf(buf, sizeof buf,
                      "constant fixed cost (t_layer = 0): the %zu models' fixed costs fall with "
                      "depth (t_layer %.3g ms asked for), so their mean is kept",
                      samples.size(), sol[1] * 1e3);
    }
    out.why = buf;
    return out;
}

} // namespace kvbe
