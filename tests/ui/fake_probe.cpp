// A stand-in for kvbe-cli in the runner's and the window's tests, selected with KVBE_CLI.
// Called as `fake_probe probe <name> … --format jsonl`; KVBE_FAKE_PROBE picks what it does:
//   stream (default)  canned lines for <name>, then exit 0 (a drive probe's with two notes)
//   crash             header and a progress line, then abort()
//   hang              header, then silence until killed
//   stubborn          header, then silence, ignoring SIGTERM (only a kill stops it)
//   exit:N            an error line, then exit code N
//   garbage           a line that is not JSON
//   hang-after:N      the first N points of the stream, then silence until stopped
//   fail-after:N      the first N points of the stream, then an error line and exit code 4
// The serving probe's stream is its TTFT points and a result with a fit.
// The header's params hold the command line ("argv": every argument after the program's name).
// KVBE_FAKE_PROBE_DELAY_MS sleeps between lines; SIGTERM ends a run like the real CLI does:
// an error line and exit code 130.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

int g_delayMs = 0;
// hang-after / fail-after: how many points, and what then.
int g_pointLimit = -1;
bool g_failAtLimit = false;

void line(const std::string& s) {
    std::string out = s + "\n";
    (void)!::write(1, out.data(), out.size());
    if (g_delayMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(g_delayMs));
}

void onTerm(int) {
    const char msg[] = "{\"type\":\"error\",\"message\":\"stopped by SIGTERM\"}\n";
    (void)!::write(1, msg, sizeof msg - 1);
    ::_exit(130);
}

// A JSON string of plain text (quotes and backslashes escaped; the tests pass nothing else).
std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// The header; its params carry the command line the fake was started with, for the tests that
// check what the window runs.
void header(const std::string& probe, int argc, char** argv) {
    std::string args;
    for (int i = 1; i < argc; ++i)
        args += (i > 1 ? "," : "") + quoted(argv[i]);
    line(R"({"kvbe_probe":2,"probe":")" + probe +
         R"(","host":"fakehost","started":"2026-01-01T00:00:00Z","params":{"argv":[)" + args +
         "]}}");
}

// Called before each point: past the limit, a hang-after run waits to be stopped and a
// fail-after run fails.
void atPoint(int i) {
    if (g_pointLimit < 0 || i < g_pointLimit) return;
    if (g_failAtLimit) {
        line(R"({"type":"error","message":"the drive went away"})");
        std::exit(4);
    }
    for (;;)
        ::pause();
}

void driveStream(const std::string& probe) {
    const std::string series = probe == "nvme-write" ? "write_GBps" : "read_GBps";
    // (block bytes, queue depth, GB/s, p50 µs, p99 µs): the best rate, 6.5 GB/s, is what
    // becomes the measured tier. IOPS is GB/s · 1e9 / block.
    const double points[][5] = {{131072, 32, 2.5, 1650, 2900},
                                {1048576, 32, 5.25, 6300, 9100},
                                {4194304, 32, 6.5, 20600, 31000},
                                {29360128, 32, 6.25, 150000, 210000}};
    line(R"({"type":"note","message":"engine: psync: asked for with --engine psync"})");
    // KVBE_FAKE_PROBE_QD1_US: first one 4 KiB read at queue depth 1, with that median latency.
    if (const char* qd1 = std::getenv("KVBE_FAKE_PROBE_QD1_US")) {
        char buf[384];
        std::snprintf(
            buf, sizeof buf,
            R"({"type":"point","series":"%s","x":4096,"y":0.018,"unit":"GB/s",)"
            R"("meta":{"block_bytes":4096,"queue_depth":1,"iops":4400,"p50_us":%s,"p99_us":400}})",
            series.c_str(), qd1);
        line(buf);
    }
    for (int i = 0; i < 4; ++i) {
        atPoint(i);
        if (i == 1)
            line(R"({"type":"note","message":"buffers not registered (Cannot allocate memory; )"
                 R"(RLIMIT_MEMLOCK 8 MiB): plain reads and writes instead"})");
        line(R"({"type":"progress","fraction":)" + std::to_string(i / 4.0) +
             R"(,"message":"QD 32, block )" + std::to_string(int(points[i][0])) + R"("})");
        char buf[384];
        std::snprintf(
            buf, sizeof buf,
            R"({"type":"point","series":"%s","x":%.0f,"y":%.6g,"unit":"GB/s",)"
            R"("meta":{"block_bytes":%.0f,"queue_depth":%.0f,"iops":%.6g,"p50_us":%.6g,"p99_us":%.6g}})",
            series.c_str(), points[i][0], points[i][2], points[i][0], points[i][1],
            points[i][2] * 1e9 / points[i][0], points[i][3], points[i][4]);
        line(buf);
    }
    line(R"({"type":"result","summary":{"best_GBps":6.5}})");
}

void copyStream(const std::string& probe) {
    const std::string series = probe == "host-memcpy" ? "memcpy_GBps" : "h2d_pinned_GBps";
    const double points[][2] = {{65536, 12}, {29360128, 48.5}, {1073741824, 52}};
    for (int i = 0; i < 3; ++i) {
        line(R"({"type":"progress","fraction":)" + std::to_string(i / 3.0) +
             R"(,"message":"size )" + std::to_string(int(points[i][0])) + R"("})");
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      R"({"type":"point","series":"%s","x":%.0f,"y":%.6g,"unit":"GB/s","meta":{}})",
                      series.c_str(), points[i][0], points[i][1]);
        line(buf);
    }
    line(R"({"type":"result","summary":{}})");
}

void prefillStream() {
    // (tokens, seconds)
    const double points[][2] = {{1024, 0.031}, {8192, 0.29}, {32768, 1.7}};
    for (int i = 0; i < 3; ++i) {
        line(R"({"type":"progress","fraction":)" + std::to_string(i / 3.0) +
             R"(,"message":"prefill of )" + std::to_string(int(points[i][0])) + R"( tokens"})");
        char buf[256];
        std::snprintf(
            buf, sizeof buf,
            R"({"type":"point","series":"t_prefill_s","x":%.0f,"y":%.6g,"unit":"s","meta":{}})",
            points[i][0], points[i][1]);
        line(buf);
        std::snprintf(
            buf, sizeof buf,
            R"({"type":"point","series":"prefill_TFLOPs","x":%.0f,"y":400,"unit":"TFLOP/s","meta":{}})",
            points[i][0]);
        line(buf);
    }
    line(R"({"type":"result","summary":{}})");
}

// The serving probe's stream: cold and hit TTFT medians, then the fit in the result.
void servingStream() {
    line(
        R"({"type":"point","series":"ttft_cold_s","x":1024,"y":0.045,"unit":"s","meta":{"p05_s":0.043,"p95_s":0.05,"samples":5,"not_hits":0}})");
    line(
        R"({"type":"point","series":"ttft_cold_s","x":8192,"y":0.31,"unit":"s","meta":{"p05_s":0.3,"p95_s":0.33,"samples":5,"not_hits":0}})");
    line(
        R"({"type":"point","series":"ttft_hit_s","x":8192,"y":0.09,"unit":"s","meta":{"p05_s":0.085,"p95_s":0.1,"samples":5,"not_hits":0,"tier":"nvme","prefix":4096,"fraction":0.5}})");
    line(
        R"({"type":"result","summary":{"fitted_to":"median","utilisation":0.4461234,"overhead_s":0.0147812,"rms_relative_residual":0.0431,)"
        R"("tiers":{"gpu":{"t_fixed_s":0.0031,"breakeven_prefix_tokens":96.4},)"
        R"("nvme":{"bandwidth_Bps":12534567890.5,"t_fixed_s":0.000224,"breakeven_prefix_tokens":1234.6}},)"
        R"("residuals":[{"series":"recompute","tokens":1024,"prefix":0,"measured_s":0.045,"fitted_s":0.047},)"
        R"({"series":"recompute","tokens":8192,"prefix":0,"measured_s":0.31,"fitted_s":0.3},)"
        R"({"series":"nvme","tokens":8192,"prefix":4096,"measured_s":0.09,"fitted_s":0.093}]}})");
}

} // namespace

int main(int argc, char** argv) {
    const std::string probe = argc > 2 ? argv[2] : "nvme-read";
    const char* modeEnv = std::getenv("KVBE_FAKE_PROBE");
    const std::string mode = modeEnv ? modeEnv : "stream";
    if (const char* d = std::getenv("KVBE_FAKE_PROBE_DELAY_MS")) g_delayMs = std::atoi(d);
    std::signal(SIGTERM, mode == "stubborn" ? SIG_IGN : onTerm);

    if (mode == "garbage") {
        line("this is not json");
        return 0;
    }
    header(probe, argc, argv);
    if (mode == "crash") {
        line(R"({"type":"progress","fraction":0.1,"message":"warming up"})");
        std::abort();
    }
    if (mode.rfind("hang-after:", 0) == 0) g_pointLimit = std::atoi(mode.c_str() + 11);
    if (mode.rfind("fail-after:", 0) == 0) {
        g_pointLimit = std::atoi(mode.c_str() + 11);
        g_failAtLimit = true;
    }
    if (mode == "hang" || mode == "stubborn") {
        for (;;)
            ::pause();
    }
    if (mode.rfind("exit:", 0) == 0) {
        const int code = std::atoi(mode.c_str() + 5);
        line(R"({"type":"error","message":"O_DIRECT is not supported on tmpfs"})");
        return code;
    }
    if (probe == "gpu-prefill")
        prefillStream();
    else if (probe == "serving")
        servingStream();
    else if (probe == "gpu-copy" || probe == "host-memcpy")
        copyStream(probe);
    else
        driveStream(probe);
    return 0;
}
