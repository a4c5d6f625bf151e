// kvbe-serving-standin: socket writes, vLLM's error bodies, waits a leaving client ends early, log
// lines (standin.h).
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

double dsize(const std::vector<std::int64_t>& v) {
    return static_cast<double>(v.size());
}

void logLine(const std::string& s) {
    std::lock_guard<std::mutex> lock(g_mutex);
    std::cerr << "standin: " << s << std::endl;
}

bool sendAll(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
        const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n <= 0) return false;
        off += static_cast<size_t>(n);
    }
    return true;
}

bool sendResponse(int fd, int status, const std::string& reason, const std::string& type,
                  const std::string& body, const std::string& extra) {
    return sendAll(fd, "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " +
                           type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
                           extra + "\r\n" + body);
}

std::string vllmError(const std::string& message, const std::string& type, int code) {
    return nlohmann::json{{"object", "error"},
                          {"message", message},
                          {"type", type},
                          {"param", nullptr},
                          {"code", code}}
        .dump();
}

bool chunk(int fd, const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return sendAll(fd, size + data + "\r\n");
}

// True when the client closed the connection (it stopped waiting).
bool clientGone(int fd) {
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    char c;
    return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

// Waits until `until` in one sleep that a client leaving ends early (ppoll on the socket): no
// periodic wake-ups, so the answer's time does not depend on how busy the machine is between.
bool waitUntil(int fd, Clock::time_point until) {
    for (;;) {
        const auto left = until - Clock::now();
        if (left <= Clock::duration::zero()) return true;
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
        pollfd p{fd, POLLRDHUP, 0};
        const int r = ::ppoll(&p, 1, &ts, nullptr);
        if (r > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return false;
        if (r > 0 && clientGone(fd)) return false;
        if (r > 0)
            std::this_thread::sleep_for(
                std::chrono::milliseconds(1)); // a pipelined request: not ours to read
    }
}

} // namespace standin
