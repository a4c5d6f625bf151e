// A build without libcurl (KVBE_WITH_CURL=OFF, or libcurl4-openssl-dev missing): the serving
// probe exists and says why it cannot run.
#include "kvbe/serving/http_client.h"

namespace kvbe::serving {

std::unique_ptr<HttpClient> makeHttpClient(std::string& whyNot) {
    whyNot = "this kvbe-cli was built without libcurl, so it has no HTTP client: install "
             "libcurl4-openssl-dev and build again (KVBE_WITH_CURL=AUTO or ON)";
    return nullptr;
}

} // namespace kvbe::serving
