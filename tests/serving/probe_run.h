// kvbe-cli probe serving run as a process, and the short sweep the serving tests share: one
// place for both, so that tst_serving_probe and tst_serving_pause run the same sweep.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QStringList>

namespace kvbe::test {

struct ProbeRun {
    int exitCode = -1;
    QByteArray out, err;
};

inline ProbeRun runProbe(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(KVBE_CLI_PATH), QStringList{"probe", "serving"} + args);
    ProbeRun r;
    if (!p.waitForStarted(10000)) return r;
    p.waitForFinished(180000);
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// A short sweep: three lengths, one fraction, one repeat; the first request (the warm-up, at the
// reference length) is a 1024-token prompt. With the drift reference (5 samples at each end)
// and the per-request floor (2 prompts) it times at least 15 requests.
inline const QStringList kQuickSweep = {"--model",       "standin/llama-3.2-3b",
                                        "--config",      "meta-llama/Llama-3.2-3B",
                                        "--peak-tflops", "2000",
                                        "--lengths",     "512,1k,2k",
                                        "--fractions",   "1",
                                        "--repeats",     "1",
                                        "--warmup",      "1",
                                        "--retry-wait",  "0.02s",
                                        "--tiers",       "offload",
                                        "--drift-limit", "10"};

} // namespace kvbe::test
