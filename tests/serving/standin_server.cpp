// kvbe-serving-standin: a STAND-IN for an OpenAI-compatible serving stack, for the tests of
// `kvbe-cli probe serving` and for trying the probe without a GPU. It is not vLLM and runs no
// model: it speaks the streaming /v1/completions protocol the way vLLM does (SSE `data:` lines,
// a usage chunk, `data: [DONE]`, vLLM's error bodies), keeps a GPU prefix cache of 16-token
// blocks and an offload tier, and answers after a configurable time model:
//
//   TTFT = overhead + [GPU hit] gpu_t_fixed + [offload hit] offload_t_fixed + kv_bytes(h_off) / B
//        + F(N − h, h) / (peak · u),     F = the simple FLOP model of docs/cost-model.md
//
// It serves /metrics with vLLM's counter names (prefix_cache_hits_total in tokens, the external
// connector's hits, cache_config_info), POST /reset_prefix_cache and SGLang's POST /flush_cache.
// With --sglang it is SGLang-shaped instead: /metrics has SGLang's names
// (sglang:prompt_tokens_total, sglang:cached_tokens_total by cache_source device/host,
// sglang:cache_hit_rate; names as in SGLang's python/sglang/srt/metrics/collector.py) and only POST
// /flush_cache resets. Prompts may be text: its tokenizer makes one token of each
// whitespace-separated word, and POST /tokenize answers as vLLM's does ({"model", "prompt",
// "add_special_tokens"} in,
// {"count", "max_model_len", "tokens"} out). With --refuse-ids it takes only text prompts.
//
// Modes that play what the real engines do (each named in docs/serving-settings.md with the source
// it was read from):
// - --report-cached: responses carry usage.prompt_tokens_details.cached_tokens (vLLM with
//   --enable-prompt-tokens-details).
// - --reset-busy-ms X: a reset within X ms of a completion's end does nothing (vLLM's scheduler
//   refuses while an offload store still holds blocks); the API answers a bare 200 as vLLM's
//   does, or {"success": false} with --reset-says.
// - --sglang: POST /flush_cache empties the offload (HiCache host) tier too, as
//   HiRadixCache.reset() does; sglang:cached_tokens_total has a series per cache_source only
//   once that source has counted a token; sglang:max_total_num_tokens gives the KV pool.
//   --sglang-total counts offload hits under cache_source="total" (the fallback label).
// - --llamacpp: llama.cpp's llama-server (tools/server at commit de3ff81): GET /props and
//   /slots, POST /slots/{id}?action=erase|save|restore (restore answers n_read and
//   timings.restore_ms), one slot whose prompt is moved to a host-RAM prompt cache when a
//   prompt with little in common replaces it (--cache-ram-mib), timings.cache_n/prompt_n and
//   usage.prompt_tokens_details.cached_tokens in the last chunk, any model name accepted, no
//   /reset_prefix_cache nor /flush_cache. Its tiers' times: --ram-gbps/--ram-tfixed-ms (a
//   prompt-cache load), --disk-gbps/--disk-tfixed-ms (a restore).
// It listens on 127.0.0.1 only, and exits by itself after --lifetime seconds.
#include "standin.h"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace standin {

void slotAction(int fd, const std::string& path, const std::string& body);

void serve(int fd) {
    std::string buf;
    char tmp[65536];
    for (;;) {
        size_t headerEnd;
        while ((headerEnd = buf.find("\r\n\r\n")) == std::string::npos) {
            const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
            if (n <= 0) return ::close(fd), void();
            buf.append(tmp, static_cast<size_t>(n));
        }
        // The time model runs from the moment the request's head is in: reading and parsing the
        // body (tens of kB of ids, longer for longer prompts) happens inside the modelled time
        // instead of adding a per-token cost the model does not have.
        const auto arrival = Clock::now();
        const std::string head = buf.substr(0, headerEnd);
        size_t length = 0;
        std::string auth;
        size_t pos = head.find("\r\n");
        while (pos != std::string::npos && pos < head.size()) {
            const size_t next = head.find("\r\n", pos + 2);
            std::string line =
                head.substr(pos + 2, (next == std::string::npos ? head.size() : next) - pos - 2);
            const size_t colon = line.find(':');
            if (colon != std::string::npos) {
                std::string name = line.substr(0, colon);
                for (auto& ch : name)
                    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                std::string value = line.substr(colon + 1);
                while (!value.empty() && value.front() == ' ')
                    value.erase(0, 1);
                if (name == "content-length") length = std::strtoul(value.c_str(), nullptr, 10);
                if (name == "authorization") auth = value;
            }
            pos = next;
        }
        while (buf.size() < headerEnd + 4 + length) {
            const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
            if (n <= 0) return ::close(fd), void();
            buf.append(tmp, static_cast<size_t>(n));
        }
        const std::string body = buf.substr(headerEnd + 4, length);
        buf.erase(0, headerEnd + 4 + length);
        const std::string requestLine = head.substr(0, head.find("\r\n"));
        const std::string method = requestLine.substr(0, requestLine.find(' '));
        std::string path = requestLine.substr(method.size() + 1);
        path = path.substr(0, path.find(' '));
        if (!g_cfg.apiKey.empty() && auth != "Bearer " + g_cfg.apiKey && path != "/metrics") {
            sendResponse(fd, 401, "Unauthorized", "application/json",
                         "{\"error\": \"Unauthorized\"}");
            continue;
        }
        if (method == "POST" && path == "/v1/completions") {
            const auto req = nlohmann::json::parse(body, nullptr, false);
            if (req.is_discarded() || !req.is_object()) {
                sendResponse(fd, 400, "Bad Request", "application/json",
                             vllmError("the body is not JSON", "BadRequestError", 400));
                continue;
            }
            completion(fd, req, arrival);
            if (clientGone(fd)) return ::close(fd), void();
        } else if (method == "POST" && path == "/tokenize") {
            const auto req = nlohmann::json::parse(body, nullptr, false);
            if (req.is_discarded() || !req.is_object() || !req.contains("prompt") ||
                !req["prompt"].is_string()) {
                sendResponse(fd, 400, "Bad Request", "application/json",
                             vllmError("prompt: a string is expected", "BadRequestError", 400));
                continue;
            }
            const auto ids = tokenize(req["prompt"].get<std::string>());
            const nlohmann::json out = {
                {"count", ids.size()}, {"max_model_len", g_cfg.maxModelLen}, {"tokens", ids}};
            sendResponse(fd, 200, "OK", "application/json", out.dump());
        } else if (method == "GET" && path == "/metrics" && g_cfg.metrics) {
            sendResponse(fd, 200, "OK", "text/plain; version=0.0.4", metricsText());
        } else if (method == "POST" && !g_cfg.llamacpp &&
                   ((path == "/reset_prefix_cache" && !g_cfg.sglang) || path == "/flush_cache") &&
                   g_cfg.reset) {
            bool busy;
            {
                std::lock_guard<std::mutex> lock(g_mutex);
                // vLLM's scheduler refuses while blocks are held (an offload store in flight).
                busy = g_cfg.resetBusyS > 0 &&
                       Clock::now() - g_lastDone < std::chrono::duration<double>(g_cfg.resetBusyS);
                if (!busy) {
                    g_gpu.clear();
                    g_lru.clear();
                    // SGLang's HiRadixCache.reset() clears the host pool as well.
                    if (g_cfg.sglang) g_offload.clear();
                }
            }
            logLine(std::string("reset ") + (busy ? "refused (busy)" : "done"));
            sendResponse(fd, 200, "OK", "application/json",
                         g_cfg.resetSays ? nlohmann::json{{"success", !busy}}.dump() : "");
        } else if (g_cfg.llamacpp && method == "GET" && path == "/props") {
            sendResponse(
                fd, 200, "OK", "application/json",
                nlohmann::json{{"default_generation_settings", {{"n_ctx", g_cfg.maxModelLen}}},
                               {"total_slots", 1},
                               {"model_alias", g_cfg.model},
                               {"model_path", "/standin/" + g_cfg.model + ".gguf"},
                               {"build_info", "kvbe-serving-standin, not llama.cpp"}}
                    .dump());
        } else if (g_cfg.llamacpp && method == "GET" && path == "/slots") {
            std::lock_guard<std::mutex> lock(g_mutex);
            sendResponse(fd, 200, "OK", "application/json",
                         nlohmann::json::array(
                             {{{"id", 0}, {"n_ctx", g_cfg.maxModelLen}, {"is_processing", false}}})
                             .dump());
        } else if (g_cfg.llamacpp && method == "POST" && path.rfind("/slots/", 0) == 0) {
            slotAction(fd, path, body);
        } else if (method == "GET" && path == "/v1/models") {
            sendResponse(fd, 200, "OK", "application/json",
                         nlohmann::json{{"object", "list"},
                                        {"data", {{{"id", g_cfg.model}, {"object", "model"}}}}}
                             .dump());
        } else {
            sendResponse(fd, 404, "Not Found", "application/json", "{\"detail\":\"Not Found\"}");
        }
    }
}

// llama.cpp's POST /slots/{id}?action=erase|save|restore on the one slot, with its answers.
void slotAction(int fd, const std::string& path, const std::string& body) {
    const auto& c = g_cfg;
    auto error = [&](int status, const std::string& message, const std::string& type) {
        sendResponse(
            fd, status, status == 501 ? "Not Implemented" : "Bad Request", "application/json",
            nlohmann::json{{"error", {{"code", status}, {"message", message}, {"type", type}}}}
                .dump());
    };
    if (!c.slotSavePath)
        return error(501,
                     "This server does not support slots action. Start it with `--slot-save-path`",
                     "not_supported_error");
    const size_t q = path.find("?action=");
    const std::string id = path.substr(7, q == std::string::npos ? std::string::npos : q - 7);
    const std::string action = q == std::string::npos ? "" : path.substr(q + 8);
    if (id != "0") return error(400, "Invalid slot ID", "invalid_request_error");
    const auto req = nlohmann::json::parse(body.empty() ? "{}" : body, nullptr, false);
    const std::string file =
        req.is_object() && req.contains("filename") && req["filename"].is_string()
            ? req["filename"].get<std::string>()
            : "";
    std::unique_lock<std::mutex> lock(g_mutex);
    if (action == "erase") {
        const auto n = g_slot.size();
        g_slot.clear();
        lock.unlock();
        sendResponse(fd, 200, "OK", "application/json",
                     nlohmann::json{{"id_slot", 0}, {"n_erased", n}}.dump());
    } else if (action == "save" && !file.empty()) {
        g_files[file] = g_slot;
        const double bytes = dsize(g_slot) * (c.kvBytesPerToken + 4) + 16;
        lock.unlock();
        sendResponse(fd, 200, "OK", "application/json",
                     nlohmann::json{{"id_slot", 0},
                                    {"filename", file},
                                    {"n_saved", g_files[file].size()},
                                    {"n_written", bytes},
                                    {"timings", {{"save_ms", 1.0}}}}
                         .dump());
    } else if (action == "restore" && !file.empty()) {
        const auto it = g_files.find(file);
        if (it == g_files.end()) {
            g_slot.clear();
            lock.unlock();
            return error(400, "Unable to restore slot: failed to open " + file,
                         "invalid_request_error");
        }
        g_slot = it->second;
        const double bytes = static_cast<double>(g_slot.size()) * (c.kvBytesPerToken + 4) + 16;
        const auto tokens = g_slot.size();
        lock.unlock();
        const double seconds = c.diskTFixedS + bytes / c.diskBps;
        waitUntil(fd, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(seconds)));
        sendResponse(fd, 200, "OK", "application/json",
                     nlohmann::json{{"id_slot", 0},
                                    {"filename", file},
                                    {"n_restored", tokens},
                                    {"n_read", bytes},
                                    {"timings", {{"restore_ms", seconds * 1e3}}}}
                         .dump());
    } else {
        lock.unlock();
        error(400, "Invalid action", "invalid_request_error");
    }
}

bool flag(int& i, int argc, char** argv, const char* name, std::string& out) {
    if (std::strcmp(argv[i], name) != 0 || i + 1 >= argc) return false;
    out = argv[++i];
    return true;
}

} // namespace standin

using namespace standin;

int main(int argc, char** argv) {
    auto& c = g_cfg;
    for (int i = 1; i < argc; ++i) {
        std::string v;
        const std::string a = argv[i];
        if (a == "--no-offload")
            c.offload = false;
        else if (a == "--uncounted-offload")
            c.countOffload = false;
        else if (a == "--no-reset")
            c.reset = false;
        else if (a == "--no-metrics")
            c.metrics = false;
        else if (a == "--sglang")
            c.sglang = true;
        else if (a == "--refuse-ids")
            c.refuseIds = true;
        else if (a == "--report-cached")
            c.reportCached = true;
        else if (a == "--reset-says")
            c.resetSays = true;
        else if (a == "--sglang-total")
            c.sglangTotal = true;
        else if (a == "--llamacpp")
            c.llamacpp = true;
        else if (a == "--no-slot-save-path")
            c.slotSavePath = false;
        else if (flag(i, argc, argv, "--reset-busy-ms", v))
            c.resetBusyS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--ram-gbps", v))
            c.ramBps = std::atof(v.c_str()) * 1e9;
        else if (flag(i, argc, argv, "--ram-tfixed-ms", v))
            c.ramTFixedS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--disk-gbps", v))
            c.diskBps = std::atof(v.c_str()) * 1e9;
        else if (flag(i, argc, argv, "--disk-tfixed-ms", v))
            c.diskTFixedS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--cache-ram-mib", v))
            c.cacheRamMiB = std::atol(v.c_str());
        else if (flag(i, argc, argv, "--model", v))
            c.model = v;
        else if (flag(i, argc, argv, "--peak-tflops", v))
            c.peakFlops = std::atof(v.c_str()) * 1e12;
        else if (flag(i, argc, argv, "--utilisation", v))
            c.utilisation = std::atof(v.c_str());
        else if (flag(i, argc, argv, "--overhead-ms", v))
            c.overheadS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--gpu-tfixed-ms", v))
            c.gpuTFixedS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--offload-tfixed-ms", v))
            c.offloadTFixedS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--offload-gbps", v))
            c.offloadBps = std::atof(v.c_str()) * 1e9;
        else if (flag(i, argc, argv, "--gpu-capacity-tokens", v))
            c.gpuCapacityTokens = std::atol(v.c_str());
        else if (flag(i, argc, argv, "--max-model-len", v))
            c.maxModelLen = std::atol(v.c_str());
        else if (flag(i, argc, argv, "--api-key", v))
            c.apiKey = v;
        else if (flag(i, argc, argv, "--fail-429", v))
            c.fail429 = std::atoi(v.c_str());
        else if (flag(i, argc, argv, "--fail-503", v))
            c.fail503 = std::atoi(v.c_str());
        else if (flag(i, argc, argv, "--truncate-at", v))
            c.truncateAt = std::atoi(v.c_str());
        else if (flag(i, argc, argv, "--hang-at", v))
            c.hangAt = std::atoi(v.c_str());
        else if (flag(i, argc, argv, "--drift", v))
            c.drift = std::atof(v.c_str());
        else if (flag(i, argc, argv, "--jitter", v))
            c.jitter = std::atof(v.c_str());
        else if (flag(i, argc, argv, "--lifetime", v))
            c.lifetimeS = std::atof(v.c_str());
        else {
            std::cerr << "kvbe-serving-standin: unknown option " << a << "\n";
            return 2;
        }
    }
    std::signal(SIGPIPE, SIG_IGN);
    const int srv = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); // 127.0.0.1 only
    addr.sin_port = 0;
    if (::bind(srv, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(srv, 16) != 0) {
        std::perror("kvbe-serving-standin: bind 127.0.0.1");
        return 1;
    }
    socklen_t len = sizeof addr;
    ::getsockname(srv, reinterpret_cast<sockaddr*>(&addr), &len);
    std::cout << "kvbe-serving-standin listening on http://127.0.0.1:" << ntohs(addr.sin_port)
              << "/v1" << std::endl;
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(c.lifetimeS));
    while (Clock::now() < end) {
        pollfd p{srv, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const int fd = ::accept(srv, nullptr, nullptr);
        if (fd < 0) continue;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::thread(serve, fd).detach();
    }
    logLine("lifetime over; exiting");
    std::_Exit(0);
}
