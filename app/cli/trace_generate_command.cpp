// kvbe-cli trace generate: a deterministic request trace in Mooncake JSONL (core's
// kvbe/trace/trace_generate.h; docs/trace.md, "Generated traces"), for benchmarks, tests and
// plans at scale.
#include "trace_plan.h"

#include "commands.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/trace_generate.h"

#include <chrono>
#include <iostream>

namespace kvbe::cli {
namespace {

struct GenerateOptions {
    TraceGeneratorSpec spec;
    std::string out;
};

ExitCode runGenerate(const GenerateOptions& o) {
    if (auto ok = checkTraceGeneratorSpec(o.spec); !ok) return fail(ok.message());
    const auto t0 = std::chrono::steady_clock::now();
    auto stats = generateTraceFile(o.spec, o.out);
    if (!stats) return fail(stats.message());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "wrote " << formatTokens(double(stats->requests)) << " requests ("
              << formatBytes(double(stats->bytes)) << ", mean prompt "
              << formatTokens(stats->meanInputTokens) << " tokens, arrivals over "
              << formatFixed(stats->durationS / 3600, 2) << " h) to " << o.out << " in "
              << formatFixed(s, 2) << " s\n";
    return ExitCode::Ok;
}

} // namespace

void addTraceGenerateCommand(CLI::App* trace, Command& run) {
    auto* gen = trace->add_subcommand(
        "generate", "Write a deterministic Mooncake JSONL trace: shared system prompts, "
                    "multi-turn conversations and one-off requests");
    auto o = std::make_shared<GenerateOptions>();
    auto& s = o->spec;
    gen->add_option("--requests", s.requests, "Requests to write")->required();
    gen->add_option("--seed", s.seed,
                    "The random seed: the same seed gives the same bytes (default 1)");
    gen->add_option("--rate", s.ratePerS, "Mean requests a second (default 20)");
    gen->add_option("--wave", s.waveShare,
                    "The rate swings by this share up and down over an hour (default 0.3)");
    gen->add_option("--system-prompts", s.systemPrompts,
                    "Shared system prompts, picked by Zipf's law (default 64)");
    gen->add_option("--one-off", s.oneOffShare,
                    "Share of requests that are one-off: a system prompt and a document "
                    "(default 0.15)");
    gen->add_option("--turns", s.meanTurns, "Mean turns of a conversation (default 7)");
    gen->add_option("--think", s.thinkS,
                    "Mean seconds from a conversation's turn to its next (default 45)");
    gen->add_option("--out", o->out, "The file to write (JSONL)")->required();
    gen->footer("\nPrompts grow turn by turn: each turn is the previous prompt, its answer "
                "(output_length) and a new message, so it shares the previous prompt's full "
                "512-token blocks. Arrivals are a Poisson process. See docs/trace.md, "
                "\"Generated traces\".");
    gen->callback([o, &run] { run = [o] { return runGenerate(*o); }; });
}

} // namespace kvbe::cli
