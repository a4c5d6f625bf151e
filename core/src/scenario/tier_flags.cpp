// The --tier grammar (tier_flags.h) and how its tiers replace the scenario's.
#include "kvbe/scenario/tier_flags.h"

#include "kvbe/cost/cost_model.h"

#include <set>

namespace kvbe {

namespace {

const std::string kForms = "KEY[×AMP][=CAPACITY] or NAME=GBPS[@FIXED_MS][×AMP][:CAPACITY]";

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

// An amplification factor as typed after '×' / 'x' or given to --amplification.
Result<double> parseAmplification(const std::string& text, const std::string& flag) {
    const std::string expected = "bytes moved per useful byte, from 1 to 1000, e.g. 2.3";
    auto a = parseNumber(text);
    if (!a) return Error{flag + " '" + text + "': expected " + expected};
    if (*a < 1 || *a > kMaxAmplification)
        return Error{flag + ": amplification " + text + "; expected " + expected +
                     " (1 means the tier moves only the useful bytes)"};
    return *a;
}

// GBPS[@FIXED_MS][×AMP][:CAPACITY] after "NAME=".
Status parseCustomTier(std::string rest, TierFlag& t) {
    const std::string flag = "--tier " + t.name;
    if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
        auto c = parseCapacity(rest.substr(colon + 1));
        if (!c) return Error{flag + ": the capacity after ':': " + c.message()};
        t.capacity = *c;
        rest.resize(colon);
    }
    std::string amp;
    if (splitAmplification(rest, amp)) {
        auto a = parseAmplification(amp, flag);
        if (!a) return a.error();
        t.amplification = *a;
    }
    if (const auto at = rest.find('@'); at != std::string::npos) {
        const std::string fixed = rest.substr(at + 1);
        auto f = parseNumber(fixed);
        if (!f) return Error{flag + " '" + fixed + "': expected a fixed cost in ms after '@'"};
        if (*f < 0 || *f > 1e7)
            return Error{flag + ": t_fixed " + fixed + " ms; expected 0 to 10,000,000 ms"};
        t.tFixedMs = *f;
        rest.resize(at);
    }
    auto bw = parseBandwidthGBps(rest);
    if (!bw) return Error{flag + ": " + bw.message()};
    t.bandwidthGBps = *bw;
    return Ok{};
}

std::string tierNames(const std::vector<TierConfig>& tiers) {
    std::string names;
    for (const auto& t : tiers) {
        names += names.empty() ? "" : ", ";
        names += t.preset.empty() ? t.name : t.preset;
    }
    return names.empty() ? std::string("none") : names;
}

} // namespace

Result<TierFlag> parseTierFlag(const std::string& text) {
    TierFlag t;
    t.text = text;
    const auto eq = text.find('=');
    t.name = text.substr(0, eq);
    if (t.name.empty()) return Error{"--tier '" + text + "': the name before '=' is empty"};
    if (eq == std::string::npos) return t;
    const std::string value = text.substr(eq + 1);
    // A bare number is a bandwidth, except 0: no tier has no bandwidth, so 0 is an empty tier.
    const bool bare = parseNumber(value).ok();
    if (!bare || *parseNumber(value) == 0) {
        if (auto c = parseCapacity(value)) {
            t.capacity = *c;
            return t;
        }
        // Neither a capacity nor anything a bandwidth could start with.
        if (value.find_first_of("@:xX") == std::string::npos &&
            value.find("\xC3\x97") == std::string::npos && !parseBandwidthGBps(value))
            return Error{"--tier " + t.name + ": '" + value +
                         "' is neither a capacity (512GiB, 8TB, 6000blocks, 3e6tokens, "
                         "unlimited) nor a bandwidth in GB/s (13.5, 13.5@1×2); expected " +
                         kForms};
    }
    if (auto st = parseCustomTier(value, t); !st) return st.error();
    return t;
}

Result<FlaggedTiers> applyTierFlags(const std::vector<TierConfig>& scenarioTiers,
                                    const std::vector<std::string>& flags, const Presets& presets) {
    struct Pick {
        bool picked = false;
        std::optional<double> amplification;
        std::optional<Capacity> capacity;
    };
    std::vector<Pick> picks(scenarioTiers.size());
    FlaggedTiers added;
    std::set<std::string> seen;
    auto matching = [&](const std::string& key) {
        std::vector<std::size_t> found;
        for (std::size_t i = 0; i < scenarioTiers.size(); ++i)
            if (scenarioTiers[i].name == key || scenarioTiers[i].preset == key) found.push_back(i);
        return found;
    };
    for (const auto& text : flags) {
        auto f = parseTierFlag(text);
        if (!f) return f.error();
        if (f->bandwidthGBps) {
            if (!seen.insert(f->name).second)
                return Error{"--tier " + f->name + ": named twice; name each tier once"};
            TierConfig t;
            t.name = f->name;
            t.bandwidthGBps = *f->bandwidthGBps;
            t.tFixedMs = f->tFixedMs;
            t.amplification = f->amplification.value_or(1);
            added.tiers.push_back(t);
            added.capacities.push_back(f->capacity);
            continue;
        }
        // A named tier: the scenario's of that name or preset key, else the preset; "KEY×AMP"
        // (or "KEYxAMP") where the whole text names none.
        std::string key = f->name;
        std::optional<double> amplification;
        auto found = matching(key);
        const TierSpec* spec = found.empty() ? presets.findTier(key) : nullptr;
        if (std::string k = key, amp; found.empty() && !spec && splitAmplification(k, amp)) {
            found = matching(k);
            spec = found.empty() ? presets.findTier(k) : nullptr;
            if (!found.empty() || spec) {
                auto a = parseAmplification(amp, "--tier " + k);
                if (!a) return a.error();
                amplification = *a;
                key = k;
            }
        }
        if (found.empty() && !spec)
            return Error{"--tier " + key + ": not a tier of the scenario (" +
                         tierNames(scenarioTiers) + ") nor a tier preset (" + presets.tierKeys() +
                         "); expected " + kForms};
        if (!seen.insert(key).second)
            return Error{"--tier " + key + ": named twice; name each tier once"};
        for (auto i : found)
            picks[i] = Pick{true, amplification, f->capacity};
        if (spec) {
            TierConfig t = tierFromPreset(*spec);
            if (amplification) t.amplification = *amplification;
            added.tiers.push_back(t);
            added.capacities.push_back(f->capacity);
        }
    }
    FlaggedTiers out;
    for (std::size_t i = 0; i < scenarioTiers.size(); ++i) {
        if (!picks[i].picked) continue;
        out.tiers.push_back(scenarioTiers[i]);
        if (picks[i].amplification) out.tiers.back().amplification = *picks[i].amplification;
        out.capacities.push_back(picks[i].capacity);
    }
    out.tiers.insert(out.tiers.end(), added.tiers.begin(), added.tiers.end());
    out.capacities.insert(out.capacities.end(), added.capacities.begin(), added.capacities.end());
    return out;
}

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

} // namespace kvbe
