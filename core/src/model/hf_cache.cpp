#include "kvbe/model/hf_cache.h"

#include "kvbe/base/json_text.h"

#include <algorithm>
#include <cstdlib>

namespace kvbe {
namespace fs = std::filesystem;

std::optional<std::string> hfIdFromCachePath(const fs::path& path) {
    for (fs::path p = path; !p.empty() && p != p.root_path(); p = p.parent_path()) {
        const auto name = p.filename().string();
        if (name.rfind("models--", 0) == 0) {
            std::string rest = name.substr(8);
            if (auto pos = rest.find("--"); pos != std::string::npos)
                return rest.substr(0, pos) + "/" + rest.substr(pos + 2);
            return rest;
        }
    }
    return std::nullopt;
}

// Inside a models--org--name folder: the snapshot refs/main points at, else the newest.
std::optional<fs::path> snapshotConfig(const fs::path& entry) {
    std::error_code ec;
    const auto snapshots = entry / "snapshots";
    if (!fs::is_directory(snapshots, ec)) return std::nullopt;
    if (auto ref = readTextFile(entry / "refs" / "main", 4096)) {
        std::string rev = *ref;
        rev.erase(rev.find_last_not_of(" \r\n\t") + 1);
        const auto cfg = snapshots / rev / "config.json";
        if (!rev.empty() && fs::exists(cfg, ec)) return cfg;
    }
    std::optional<fs::path> best;
    fs::file_time_type bestTime{};
    for (const auto& e : fs::directory_iterator(snapshots, ec)) {
        const auto cfg = e.path() / "config.json";
        if (!fs::exists(cfg, ec)) continue;
        const auto t = fs::last_write_time(e.path(), ec);
        if (!best || t > bestTime) {
            best = cfg;
            bestTime = t;
        }
    }
    return best;
}

std::vector<fs::path> hfCacheRoots() {
    std::vector<fs::path> roots;
    auto add = [&](const fs::path& p) {
        std::error_code ec;
        if (fs::is_directory(p, ec) && std::find(roots.begin(), roots.end(), p) == roots.end())
            roots.push_back(p);
    };
    if (const char* v = std::getenv("HF_HUB_CACHE")) add(v);
    if (const char* v = std::getenv("HUGGINGFACE_HUB_CACHE")) add(v);
    if (const char* v = std::getenv("HF_HOME")) add(fs::path(v) / "hub");
    if (const char* home = std::getenv("HOME"))
        add(fs::path(home) / ".cache" / "huggingface" / "hub");
    return roots;
}

std::optional<fs::path> findInHfCache(const std::string& id) {
    const auto slash = id.find('/');
    if (slash == std::string::npos) return std::nullopt;
    const std::string folder = "models--" + id.substr(0, slash) + "--" + id.substr(slash + 1);
    for (const auto& root : hfCacheRoots())
        if (auto cfg = snapshotConfig(root / folder)) return cfg;
    return std::nullopt;
}

std::vector<std::pair<std::string, fs::path>> listHfCache() {
    std::vector<std::pair<std::string, fs::path>> out;
    for (const auto& root : hfCacheRoots()) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(root, ec)) {
            const auto name = e.path().filename().string();
            if (name.rfind("models--", 0) != 0) continue;
            if (auto cfg = snapshotConfig(e.path()))
                out.emplace_back(*hfIdFromCachePath(e.path()), *cfg);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace kvbe
