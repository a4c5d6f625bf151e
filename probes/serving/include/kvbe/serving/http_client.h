// The serving probe's HTTP client: one request at a time, the body handed over as it arrives
// (server-sent events), a stop check polled every few milliseconds so that Ctrl-C or Cancel
// closes the connection at once and leaves no request running on the server. libcurl where the
// build has it; otherwise makeHttpClient says why there is none.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe::serving {

struct HttpRequest {
    std::string method = "GET"; // GET or POST
    std::string url;
    std::string body;                 // POST body (JSON)
    std::vector<std::string> headers; // "Name: value"
    double timeoutS = 60;             // the whole exchange
    // Receives the body as it arrives (nullptr: collected into HttpResponse::body). Return false
    // to end the exchange early (then `endedByReader` is set).
    std::function<bool(std::string_view)> onBody;
};

struct HttpResponse {
    long status = 0;            // HTTP status; 0 when no response came
    std::string transportError; // why the exchange did not complete ("" when it did)
    bool connectFailed = false; // nothing listens there, or the name does not resolve
    bool timedOut = false;
    bool stopped = false; // the stop check said stop; the connection was closed
    bool endedByReader = false;
    std::string body;        // when the request had no onBody
    double retryAfterS = -1; // the Retry-After header in seconds, -1 when absent
};

class HttpClient {
  public:
    virtual ~HttpClient() = default;
    // `stop` is polled while waiting (every 10 ms at most); nullptr: never stop.
    virtual HttpResponse send(const HttpRequest& request, const std::function<bool()>& stop) = 0;
};

// nullptr when this build has no HTTP client; `whyNot` then says so in a sentence.
std::unique_ptr<HttpClient> makeHttpClient(std::string& whyNot);

} // namespace kvbe::serving
