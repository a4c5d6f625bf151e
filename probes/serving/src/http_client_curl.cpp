// HttpClient on libcurl's multi interface: curl_multi_poll wakes at least every 10 ms, so a stop
// is seen within that time and the transfer removed, which closes its connection (the server
// then aborts the request: vLLM and SGLang do on disconnect). Connections are kept between
// requests by the multi handle's pool.
#include "kvbe/serving/http_client.h"

#include <curl/curl.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <strings.h>

namespace kvbe::serving {
namespace {

void globalInit() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
    const HttpRequest* request = nullptr;
    HttpResponse* response = nullptr;
    bool readerStopped = false;
};

size_t onWrite(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t bytes = size * n;
    if (t->request->onBody) {
        if (!t->request->onBody(std::string_view(data, bytes))) {
            t->readerStopped = true;
            return 0; // curl ends the transfer with CURLE_WRITE_ERROR
        }
    } else {
        t->response->body.append(data, bytes);
    }
    return bytes;
}

size_t onHeader(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t bytes = size * n;
    std::string_view line(data, bytes);
    constexpr std::string_view kRetry = "retry-after:";
    if (line.size() > kRetry.size() &&
        strncasecmp(line.data(), kRetry.data(), kRetry.size()) == 0) {
        const std::string value(line.substr(kRetry.size()));
        char* end = nullptr;
        const double s = std::strtod(value.c_str(), &end);
        if (end != value.c_str() && s >= 0) t->response->retryAfterS = s;
    }
    return bytes;
}

class CurlClient : public HttpClient {
  public:
    CurlClient() : m_multi(curl_multi_init()) {}
    ~CurlClient() override {
        if (m_multi) curl_multi_cleanup(m_multi);
    }
    CurlClient(const CurlClient&) = delete;
    CurlClient& operator=(const CurlClient&) = delete;

    HttpResponse send(const HttpRequest& request, const std::function<bool()>& stop) override {
        HttpResponse response;
        Transfer transfer{&request, &response};
        CURL* easy = curl_easy_init();
        if (!easy || !m_multi) {
            response.transportError = "libcurl could not make a transfer handle";
            if (easy) curl_easy_cleanup(easy);
            return response;
        }
        curl_slist* headers = nullptr;
        for (const auto& h : request.headers)
            headers = curl_slist_append(headers, h.c_str());
        curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, onWrite);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
        curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, onHeader);
        curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer);
        const long timeoutMs = std::max(1L, static_cast<long>(request.timeoutS * 1000));
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeoutMs);
        curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, std::min(timeoutMs, 10000L));
        // Token-id prompts are large (64k ids ≈ 400 kB): no "Expect: 100-continue" round trip.
        headers = curl_slist_append(headers, "Expect:");
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        if (request.method == "POST") {
            curl_easy_setopt(easy, CURLOPT_POST, 1L);
            curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
            curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                             static_cast<curl_off_t>(request.body.size()));
        }
        curl_multi_add_handle(m_multi, easy);
        CURLcode result = CURLE_OK;
        bool done = false;
        while (!done) {
            int running = 0;
            const CURLMcode mc = curl_multi_perform(m_multi, &running);
            if (mc != CURLM_OK) {
                response.transportError = std::string("libcurl: ") + curl_multi_strerror(mc);
                break;
            }
            int queued = 0;
            while (CURLMsg* msg = curl_multi_info_read(m_multi, &queued)) {
                if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) {
                    result = msg->data.result;
                    done = true;
                }
            }
            if (done) break;
            if (stop && stop()) {
                response.stopped = true;
                break;
            }
            curl_multi_poll(m_multi, nullptr, 0, 10, nullptr);
        }
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response.status);
        if (response.stopped || !done) {
            // Removing an unfinished transfer closes its connection: nothing stays in flight.
            curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
        }
        curl_multi_remove_handle(m_multi, easy);
        curl_easy_cleanup(easy);
        curl_slist_free_all(headers);
        if (done && result != CURLE_OK) {
            if (transfer.readerStopped) {
                response.endedByReader = true;
            } else {
                response.transportError = curl_easy_strerror(result);
                response.timedOut = result == CURLE_OPERATION_TIMEDOUT;
                response.connectFailed =
                    result == CURLE_COULDNT_CONNECT || result == CURLE_COULDNT_RESOLVE_HOST;
            }
        }
        return response;
    }

  private:
    CURLM* m_multi = nullptr;
};

} // namespace

std::unique_ptr<HttpClient> makeHttpClient(std::string& whyNot) {
    globalInit();
    whyNot.clear();
    return std::make_unique<CurlClient>();
}

} // namespace kvbe::serving
