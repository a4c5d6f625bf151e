#include "kvbe/scenario/hardware.h"

#include "kvbe/base/text.h"

#include <array>

namespace kvbe {

namespace {

struct KindName {
    TierKind kind;
    std::string_view name;
};
constexpr std::array<KindName, 3> kKinds{{
    {TierKind::Dram, "dram"},
    {TierKind::Nvme, "nvme"},
    {TierKind::Network, "network"},
}};

// The words that name each kind in other tools' and papers' tier names.
constexpr std::array<std::string_view, 3> kNvmeWords{"nvme", "ssd", "disk"};
constexpr std::array<std::string_view, 3> kDramWords{"dram", "mem", "cpu"};

} // namespace

std::optional<TierKind> parseTierKind(std::string_view text) {
    const std::string t = lower(text);
    for (const auto& k : kKinds)
        if (t == k.name) return k.kind;
    return std::nullopt;
}

std::string_view toString(TierKind kind) {
    for (const auto& k : kKinds)
        if (k.kind == kind) return k.name;
    return "dram";
}

std::string tierKindChoices() {
    return "dram, nvme or network";
}

std::optional<TierKind> tierKindOfWord(std::string_view word) {
    const std::string w = lower(word);
    for (auto n : kNvmeWords)
        if (w == n) return TierKind::Nvme;
    for (auto n : kDramWords)
        if (w == n) return TierKind::Dram;
    return std::nullopt;
}

bool nameSuggestsKind(std::string_view name, TierKind kind) {
    const std::string n = lower(name);
    const auto has = [&](const auto& words) {
        for (auto w : words)
            if (n.find(w) != std::string::npos) return true;
        return false;
    };
    if (kind == TierKind::Nvme) return has(kNvmeWords);
    if (kind == TierKind::Dram) return has(kDramWords);
    return false;
}

} // namespace kvbe
