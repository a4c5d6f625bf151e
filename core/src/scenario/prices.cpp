#include "kvbe/scenario/prices.h"

#include "kvbe/base/embedded.h"
#include "kvbe/base/json_fields.h"
#include "kvbe/base/json_text.h"

#include <limits>

namespace kvbe {
using nlohmann::json;

namespace {

constexpr const char* kExpected =
    "a price in USD, 0 or more (a number, or {\"usd\": N, \"source\": "
    "\"where it comes from\"})";

// A price at obj[key]: a number, or {"usd": N, "source": "…"}.
std::optional<Price> readPrice(const FieldReader& r, const json& obj, const std::string& key,
                               const std::string& path) {
    if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
    const json& v = obj[key];
    Price p;
    constexpr double kMax = std::numeric_limits<double>::max();
    if (v.is_object()) {
        auto usd = r.number(v, "usd", path + ".usd", 0, kMax, kExpected);
        if (!usd) r.fail(path + ".usd", kExpected, nullptr);
        p.usd = *usd;
        p.source = r.string(v, "source", path + ".source").value_or("");
    } else {
        p.usd = *r.number(obj, key, path, 0, kMax, kExpected);
    }
    return p;
}

void readPrices(const FieldReader& r, const json& obj, const std::string& key,
                const std::string& path, std::map<std::string, Price>& out) {
    if (!obj.contains(key)) return;
    const json& m = r.object(obj, key, path);
    for (const auto& [name, v] : m.items())
        if (auto p = readPrice(r, m, name, path + "." + name)) out[name] = *p;
}

} // namespace

PriceTable readPriceTable(const FieldReader& r, const json& obj, const std::string& at) {
    const std::string pre = at.empty() ? "" : at + ".";
    if (!obj.is_object()) r.fail(at.empty() ? "(top level)" : at, "an object of prices", &obj);
    PriceTable t;
    t.origin = r.source();
    t.note = r.string(obj, "note", pre + "note").value_or("");
    t.example = r.boolean(obj, "example", pre + "example").value_or(false);
    if (auto c = r.string(obj, "currency", pre + "currency"); c && *c != "USD")
        r.fail(pre + "currency", "\"USD\" (the plan's figures are in US dollars)",
               &obj["currency"]);
    t.dramPerGiB = readPrice(r, obj, "dram_usd_per_GiB", pre + "dram_usd_per_GiB");
    readPrices(r, obj, "gpu_usd_per_hour", pre + "gpu_usd_per_hour", t.gpuPerHour);
    readPrices(r, obj, "drive_usd", pre + "drive_usd", t.drive);
    readPrices(r, obj, "link_usd", pre + "link_usd", t.link);
    return t;
}

Result<PriceTable> parsePriceTable(std::string_view text, const std::string& source) {
    auto j = parseJsonText(text, source);
    if (!j) return j.error();
    try {
        return readPriceTable(FieldReader(*j, source), *j, "");
    } catch (const FieldError& e) {
        return Error{e.message};
    }
}

Result<PriceTable> loadPriceTable(const std::string& path) {
    auto text = readTextFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    return parsePriceTable(*text, path);
}

Result<PriceTable> builtinPriceTable() {
    const auto text = embeddedText("prices.json");
    if (!text) return Error{"resources/prices.json is not in this build"};
    return parsePriceTable(*text, "resources/prices.json");
}

PriceTable overridePrices(PriceTable base, const PriceTable& over) {
    if (over.empty()) return base;
    if (over.dramPerGiB) base.dramPerGiB = over.dramPerGiB;
    for (const auto& [k, p] : over.gpuPerHour)
        base.gpuPerHour[k] = p;
    for (const auto& [k, p] : over.drive)
        base.drive[k] = p;
    for (const auto& [k, p] : over.link)
        base.link[k] = p;
    base.origin += " with " + over.origin + "'s prices";
    return base;
}

PriceTable pricesInForce(const PriceTable& own) {
    auto builtin = builtinPriceTable();
    return overridePrices(builtin ? *builtin : PriceTable{}, own);
}

} // namespace kvbe
