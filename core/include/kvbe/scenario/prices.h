// What the hardware a plan buys costs, and what a GPU-hour is worth: resources/prices.json
// (embedded), a file given with `kvbe-cli trace plan --prices FILE`, and a scenario's `prices`,
// which overrides single values. Every figure of the shipped table is an example with its source
// and date, to be replaced with the user's own quotes.
#pragma once

#include "kvbe/base/json_fields.h"
#include "kvbe/base/result.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kvbe {

struct Price {
    double usd = 0;
    std::string source; // where the figure comes from and when it was read; "" for a user's own
    bool operator==(const Price&) const = default;
};

struct PriceTable {
    std::string origin;   // "resources/prices.json (example prices)", a file, "the scenario"
    bool example = false; // the shipped examples: reports say to replace them
    std::string note;
    std::optional<Price> dramPerGiB;
    std::map<std::string, Price> gpuPerHour; // by GPU preset key
    std::map<std::string, Price> drive;      // one drive, by tier preset key (or tier name)
    // One node's link to a pool (its network adapter, and whatever else of the link the quote
    // covers), by network tier preset key: a fleet plan's pooled placement buys one a node.
    std::map<std::string, Price> link;
    bool empty() const {
        return !dramPerGiB && gpuPerHour.empty() && drive.empty() && link.empty();
    }
    bool operator==(const PriceTable&) const = default;
};

// Parses a price table (the layout of resources/prices.json): "dram_usd_per_GiB",
// "gpu_usd_per_hour" {GPU key: …}, "drive_usd" {tier key: …} and "link_usd" {network tier
// key: …}, each price a number of USD or
// {"usd": N, "source": "…"}; every key optional. A negative price or one that is not a number
// fails with a sentence naming the file and the field.
Result<PriceTable> parsePriceTable(std::string_view json, const std::string& source);
Result<PriceTable> loadPriceTable(const std::string& path);
// The same fields of obj (a scenario's "prices"); `at` names obj in messages. Throws FieldError.
PriceTable readPriceTable(const FieldReader& r, const nlohmann::json& obj, const std::string& at);
// The embedded resources/prices.json.
Result<PriceTable> builtinPriceTable();

// `over`'s prices replace `base`'s one by one; the origin says both.
PriceTable overridePrices(PriceTable base, const PriceTable& over);
// The prices in force for a scenario whose own prices are `own`: the shipped table (none where
// it cannot be read) with `own` over it.
PriceTable pricesInForce(const PriceTable& own);

} // namespace kvbe
