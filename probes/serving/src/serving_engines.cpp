// The serving sweep's knowledge of each engine beyond the OpenAI routes: which server is
// behind the endpoint (llama.cpp's GET /props, /slots), whether it serves the model named, and
// llama.cpp's slot actions (POST /slots/{id}?action=erase|save|restore) with its two offload
// tiers: the host-RAM prompt cache (--cache-ram) and a slot saved to a file (--slot-save-path).
// Routes and fields as llama.cpp's tools/server at commit de3ff81 has them
// (docs/serving-settings.md).
#include "serving_parts.h"
#include "serving_sweep.h"

#include "kvbe/probes/stream.h"

#include <algorithm>
#include <cmath>

namespace kvbe::serving::detail {
namespace {

// The JSON of a GET, or a discarded value with `status` set.
nlohmann::json getJson(HttpClient& http, const std::string& url,
                       const std::vector<std::string>& headers, double timeoutS,
                       const std::function<bool()>& stop, long& status) {
    HttpRequest req;
    req.url = url;
    req.headers = headers;
    req.timeoutS = timeoutS;
    const HttpResponse r = http.send(req, stop);
    status = r.status;
    if (r.status != 200) return nlohmann::json::value_t::discarded;
    return nlohmann::json::parse(r.body, nullptr, false);
}

} // namespace

std::optional<ProbeOutcome> Sweep::detectEngine() {
    const auto& s = m_s;
    const double t = std::min(30.0, s.timeoutS);
    const auto stop = [this] { return stopping(); };
    long status = 0;
    // llama.cpp's server: GET /props has total_slots and build_info (server-context.cpp,
    // get_res_props); /slots lists the slots with their ids.
    const auto props = (s.reset == "auto" || s.reset == "llamacpp")
                           ? getJson(m_http, m_root + "/props", m_headers, t, stop, status)
                           : nlohmann::json(nlohmann::json::value_t::discarded);
    if (stopping()) return fail(ExitCode::Stopped, probes::stopMessage());
    const bool llama = props.is_object() && props.contains("total_slots");
    if (llama) {
        m_engine = Engine::LlamaCpp;
        std::string build = props.value("build_info", std::string());
        note("the server is llama.cpp's llama-server" + (build.empty() ? "" : " (" + build + ")") +
             ": slots cleared with POST " + m_root +
             "/slots/{id}?action=erase, every request on "
             "slot " +
             std::to_string(m_slot));
        m_resetPath = "/slots/" + std::to_string(m_slot) + "?action=erase";
    } else if (s.reset == "llamacpp") {
        return fail(ExitCode::CannotRun,
                    "--reset llamacpp: GET " + m_root + "/props answered " +
                        (status ? std::to_string(status) : std::string("nothing")) +
                        " without \"total_slots\": this is not llama.cpp's llama-server");
    }
    // The offload tiers: llama.cpp has two of its own, the others the one --offload-tier names.
    m_offloadTiers.clear();
    if (s.tierOffload) {
        if (llama)
            m_offloadTiers = {"dram", "nvme"};
        else
            m_offloadTiers = {s.offloadTier};
    }
    if (llama && s.tierOffload)
        note("llama.cpp's offload tiers: dram = its host-RAM prompt cache (--cache-ram; the "
             "slot's prompt moved there by a short filler prompt), nvme = the slot saved to a "
             "file under --slot-save-path and restored (POST /slots/" +
             std::to_string(m_slot) +
             "?action=save|restore; the restore's time is part of each hit, and its "
             "n_read and timings.restore_ms are reported beside it)");

    // The model name: servers that ignore it (llama.cpp) answer any name, so it is checked here.
    const auto models = getJson(m_http, m_root + "/v1/models", m_headers, t, stop, status);
    std::vector<std::string> names;
    if (models.is_object() && models.contains("data") && models["data"].is_array())
        for (const auto& m : models["data"])
            if (m.is_object() && m.contains("id") && m["id"].is_string())
                names.push_back(m["id"].get<std::string>());
    if (llama && props.contains("model_alias") && props["model_alias"].is_string())
        names.push_back(props["model_alias"].get<std::string>());
    if (!names.empty() && std::find(names.begin(), names.end(), s.model) == names.end()) {
        std::string list;
        for (const auto& n : names)
            list += (list.empty() ? "" : ", ") + n;
        note("warning: --model '" + s.model + "' is not a model this server serves (" +
             (llama ? "/v1/models and /props name: " : "/v1/models names: ") + list + ")" +
             (llama ? "; llama.cpp answers any name with its one model" : ""));
    }
    return std::nullopt;
}

Sent Sweep::slotAction(const std::string& action, const std::string& filename,
                       nlohmann::json* reply) {
    HttpRequest req;
    req.method = "POST";
    req.url = m_root + "/slots/" + std::to_string(m_slot) + "?action=" + action;
    req.headers = m_headers;
    req.body = filename.empty() ? "{}" : nlohmann::json{{"filename", filename}}.dump();
    req.timeoutS = m_s.timeoutS;
    const HttpResponse r = m_http.send(req, [this] { return stopping(); });
    if (r.stopped) return {ExitCode::Stopped, probes::stopMessage()};
    if (!r.transportError.empty())
        return {ExitCode::Failed, "POST " + req.url + ": " + r.transportError};
    if (r.status != 200)
        return {ExitCode::CannotRun,
                "POST " + req.url + " answered " + std::to_string(r.status) + ": " +
                    detail::errorMessage(r.body) +
                    (r.status == 501 ? " (start llama-server with --slot-save-path DIR)" : "")};
    if (reply) *reply = nlohmann::json::parse(r.body, nullptr, false);
    return {};
}

Sent Sweep::llamaTierSetup(Cell& cell, double& extraS) {
    if (cell.tier == "dram") {
        // A short fresh prompt takes the slot: llama.cpp saves the slot's prompt (the prefix)
        // into its host-RAM prompt cache before it computes the filler. The timed request then
        // finds the filler in the slot (nothing in common) and loads the prefix from host RAM;
        // it also saves the filler's few tokens, as any request that replaces a slot's prompt
        // does. (An empty pinned slot would not look in the cache at all: get_available_slot
        // reads f_keep as 0/0 there.)
        Sent filler = send(fresh(std::max<std::int64_t>(m_s.blockSize, 32)));
        return filler.ok() ? Sent{} : filler;
    }
    // nvme: the slot to a file, the slot erased, the file read back; the restore is part of the
    // hit, timed here on the same clock as TTFT.
    if (m_slotFile.empty())
        m_slotFile = "kvbe-probe-slot-" + std::to_string(m_rng() % 1000000) + ".bin";
    nlohmann::json saved;
    Sent s = slotAction("save", m_slotFile, &saved);
    if (!s.ok()) return s;
    s = slotAction("erase", "", nullptr);
    if (!s.ok()) return s;
    nlohmann::json restored;
    const auto t0 = Clock::now();
    s = slotAction("restore", m_slotFile, &restored);
    if (!s.ok()) return s;
    extraS = std::chrono::duration<double>(Clock::now() - t0).count();
    if (restored.is_object() && restored.contains("n_read") && restored["n_read"].is_number() &&
        restored.contains("timings") && restored["timings"].is_object() &&
        restored["timings"].contains("restore_ms") &&
        restored["timings"]["restore_ms"].is_number()) {
        cell.restoreBytes.push_back(restored["n_read"].get<double>());
        cell.restoreWallS.push_back(extraS);
        cell.restoreMs.push_back(restored["timings"]["restore_ms"].get<double>());
    } else {
        return {ExitCode::Failed, "POST " + m_root + "/slots/" + std::to_string(m_slot) +
                                      "?action=restore answered without n_read and "
                                      "timings.restore_ms: " +
                                      restored.dump().substr(0, 300)};
    }
    return {};
}

} // namespace kvbe::serving::detail
