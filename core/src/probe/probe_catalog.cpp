// The probe catalog: every probe and every option of it, once (a table). kvbe-cli's `probe`
// subcommands, their --help and the window's Probes dock are all built from it.
#include "kvbe/probe/probe_catalog.h"

#include "kvbe/base/units.h"
#include "kvbe/scenario/scenario_flags.h"

#include <limits>

namespace kvbe {

namespace {

using K = ProbeOptionKind;

// The table names only the fields each option sets and leaves the others at their defaults;
// GCC's -Wmissing-field-initializers warns about every designated initializer that does so.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

const char* const kDriveMemory =
    "Memory: queue depth × block size of I/O buffers (rounded up to whole 2 MiB pages), at most "
    "64 × 28 MiB = 1.75 GiB with the defaults; plus 8 MiB while the scratch file is written";
const char* const kGpuFooter =
    "Without a usable CUDA GPU the probe says so in one sentence and exits with 3.";

// nvme-read and nvme-write share every option but the read-only targets.
std::vector<ProbeOption> driveOptions(bool readable) {
    std::vector<ProbeOption> o;
    o.push_back({.flag = "--dir",
                 .kind = K::Folder,
                 .help = "Make a scratch file in DIR (written fully with non-zero data first, "
                         "removed on exit)",
                 .group = "Drive",
                 .label = "folder",
                 .placeholder = "a folder on the drive to measure"});
    if (readable) {
        o.push_back({.flag = "--file",
                     .kind = K::File,
                     .help = "Read an existing file, read-only, never written",
                     .group = "Drive",
                     .label = "file",
                     .placeholder = "an existing file on the drive, only read"});
        o.push_back({.flag = "--device",
                     .kind = K::File,
                     .help = "Read a block device, read-only (devices are refused elsewhere)",
                     .group = "Drive"});
    }
    o.push_back({.flag = "--file-size",
                 .kind = K::Bytes,
                 .help = "Scratch file size, e.g. 4GiB (default 4GiB; --dir only)",
                 .label = "File size",
                 .placeholder = "4GiB",
                 .onlyWith = "--dir"});
    o.push_back({.flag = "--block-sizes",
                 .kind = K::Bytes,
                 .help = "Block sizes, e.g. 128KiB,1MiB,28MiB (default 128KiB,1MiB,4MiB and the KV "
                         "block of --model)",
                 .list = true,
                 .label = "Block sizes",
                 .placeholder = "128KiB,1MiB,4MiB and the KV block"});
    o.push_back({.flag = "--queue-depths",
                 .kind = K::Count,
                 .help = "Queue depths, e.g. 1,32 (default 1,4,16,32,64)",
                 .list = true,
                 .label = "Queue depths",
                 .placeholder = "1,4,16,32,64"});
    o.push_back({.flag = "--duration",
                 .kind = K::Seconds,
                 .help = "Measured time per setting, split into 5 windows, after a warm-up of 20% "
                         "(at most 1 s)",
                 .defaultValue = "5s",
                 .label = "Duration"});
    o.push_back({.flag = "--engine",
                 .kind = K::Choice,
                 .help = "io_uring or psync (default: io_uring when it can run here, else psync, "
                         "and says why)",
                 .defaultValue = "auto",
                 .choices = {"auto", "io_uring", "psync"},
                 .label = "Engine"});
    o.push_back({.flag = "--buffered",
                 .kind = K::Flag,
                 .help = "Go through the page cache instead of O_DIRECT (labelled BUFFERED "
                         "wherever shown)"});
    o.push_back({.flag = "--pattern",
                 .kind = K::Choice,
                 .help = "Offsets: random whole blocks (default) or sequential",
                 .defaultValue = "random",
                 .choices = {"random", "sequential"}});
    o.push_back({.flag = "--model",
                 .kind = K::Model,
                 .help =
                     "Model whose KV block (256 tokens × KV bytes per token) joins the block "
                     "sizes (default: the default scenario's, meta-llama/Llama-3.2-3B = 28 MiB)",
                 .label = "Model"});
    return o;
}

// --samples and --device of every GPU probe.
void addGpuCommon(std::vector<ProbeOption>& o, std::string_view samples, std::string_view help) {
    o.push_back({.flag = "--samples", .kind = K::Count, .help = help, .defaultValue = samples});
    o.push_back({.flag = "--device",
                 .kind = K::Count,
                 .help = "CUDA device index (default 0)",
                 .defaultValue = "0",
                 .label = "GPU"});
}

std::vector<ProbeDescription> makeCatalog() {
    std::vector<ProbeDescription> c;
    c.push_back({.key = "nvme-read",
                 .title = "Drive read",
                 .description = "Read bandwidth, IOPS and latency of a drive over block sizes × "
                                "queue depths (O_DIRECT)",
                 .needs = "a folder, file or block device on the drive; io_uring where the kernel "
                          "allows it, else psync",
                 .footer = kDriveMemory,
                 .options = driveOptions(true)});
    c.push_back({.key = "nvme-write",
                 .title = "Drive write",
                 .description = "Write bandwidth, IOPS and latency of a drive, into a scratch file "
                                "(O_DIRECT)",
                 .needs = "a writable folder on the drive with room for the scratch file",
                 .footer = kDriveMemory,
                 .options = driveOptions(false)});
    c.push_back({.key = "host-memcpy",
                 .title = "Host memory copy",
                 .description = "Host memory copy bandwidth, one thread and every core (the host "
                                "side of a DRAM tier)",
                 .needs = "free memory for two buffers",
                 .footer = "Memory: two buffers of --buffer-size (2 GiB with the default)",
                 .options = {{.flag = "--buffer-size",
                              .kind = K::Bytes,
                              .help = "Size of each of the two buffers (default 1GiB)",
                              .defaultValue = "1GiB"},
                             {.flag = "--threads",
                              .kind = K::Count,
                              .help = "Thread counts, e.g. 1,8 (default 1 and every core)",
                              .list = true},
                             {.flag = "--duration",
                              .kind = K::Seconds,
                              .help = "Measured time per setting, split into 5 windows, after a "
                                      "warm-up",
                              .defaultValue = "5s",
                              .label = "Duration"}}});

    ProbeDescription copy{
        .key = "gpu-copy",
        .title = "Host↔GPU copy",
        .description = "Host↔GPU copy bandwidth, pinned and pageable, 64 KiB to 1 GiB and the "
                       "model's KV block",
        .needs = "a CUDA GPU and a build with CUDA",
        .footer = kGpuFooter,
        .options = {{.flag = "--sizes",
                     .kind = K::Bytes,
                     .help = "Copy sizes, e.g. 64KiB,28MiB,1GiB (default 64KiB to 1GiB by 4×, and "
                             "the KV block)",
                     .list = true,
                     .label = "Copy sizes",
                     .placeholder = "64KiB to 1GiB by 4×, and the KV block"},
                    {.flag = "--model",
                     .kind = K::Model,
                     .help = "Model whose KV block (256 tokens) joins the sizes (default: the "
                             "default scenario's)",
                     .label = "Model"},
                    {.flag = "--pinned-only",
                     .kind = K::Flag,
                     .help = "Only pinned (page-locked) host memory",
                     .group = "host memory"},
                    {.flag = "--pageable-only",
                     .kind = K::Flag,
                     .help = "Only pageable host memory",
                     .group = "host memory"}}};
    addGpuCommon(copy.options, "5",
                 "Timed samples per setting; the median is reported (default 5, at least 3)");
    c.push_back(std::move(copy));

    ProbeDescription gemm{
        .key = "gpu-gemm-peak",
        .title = "GPU GEMM peak",
        .description =
            "The best BF16 GEMM rate this GPU reaches with cuBLASLt (large square shapes)",
        .needs = "a CUDA GPU and a build with CUDA",
        .footer = kGpuFooter,
        .options = {{.flag = "--sizes",
                     .kind = K::Tokens,
                     .help = "Square sizes m = n = k, e.g. 4096,8192 (default 4096,8192,16384)",
                     .list = true,
                     .label = "Sizes",
                     .placeholder = "4096,8192,16384"}}};
    addGpuCommon(gemm.options, "5",
                 "Timed samples per setting; the median is reported (default 5, at least 3)");
    c.push_back(std::move(gemm));

    ProbeDescription prefill{
        .key = "gpu-prefill",
        .title = "GPU prefill",
        .description = "Prefill time of a model at its real shapes: one synthetic layer of each "
                       "kind, timed, summed over the layers",
        .needs = "a CUDA GPU and a build with CUDA",
        .footer = kGpuFooter,
        .options = {{.flag = "--model",
                     .kind = K::Model,
                     .help = "Preset id, config.json, model folder or Hugging Face cache id",
                     .required = true,
                     .label = "Model"},
                    {.flag = "--lengths",
                     .kind = K::Tokens,
                     .help = "Prompt lengths in tokens, e.g. 1k,8k,32k,80k (default; up to 1M, "
                             "memory permitting)",
                     .list = true,
                     .label = "Lengths",
                     .placeholder = "1k,8k,32k,80k"},
                    {.flag = "--gpu-preset",
                     .kind = K::Text,
                     .help = "GPU preset for the data-sheet peak (default: matched from the device "
                             "name)"},
                    {.flag = "--gemm-peak-tflops",
                     .kind = K::Number,
                     .help = "Peak from a gpu-gemm-peak run (default: measured here on 8192³)"}}};
    addGpuCommon(prefill.options, "3",
                 "Timed samples per setting; the median is reported (default 3, at least 3)");
    c.push_back(std::move(prefill));

    c.push_back(
        {.key = "serving",
         .title = "Serving stack TTFT",
         .description = "End-to-end TTFT against an OpenAI-compatible server (vLLM, SGLang): cold, "
                        "GPU-hit and offload-hit prompts, fitted",
         .needs = "a running OpenAI-compatible server and a build with libcurl",
         .footer = "Sends traffic only to --endpoint. Prompts are token ids (/v1/completions, "
                   "stream, max_tokens 1); a server that refuses ids\n"
                   "gets text whose length its POST /tokenize confirms, and the probe says so.\n"
                   "Memory: the prompts of one request (a few MB at 64k tokens).",
         .options = {
             {.flag = "--endpoint",
              .kind = K::Url,
              .help = "OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1",
              .required = true,
              .label = "Endpoint",
              .placeholder = "http://127.0.0.1:8000/v1"},
             {.flag = "--model",
              .kind = K::Text,
              .help = "Served model name (as in /v1/models); also the model geometry unless "
                      "--config",
              .required = true,
              .label = "Served model",
              .placeholder = "as in /v1/models"},
             {.flag = "--lengths",
              .kind = K::Tokens,
              .help = "Prompt lengths in tokens (default 1k,4k,8k,16k,32k,64k)",
              .defaultValue = "1k,4k,8k,16k,32k,64k",
              .list = true,
              .label = "Lengths"},
             {.flag = "--fractions",
              .kind = K::Number,
              .help = "Cached fractions of each prompt (default 0.1,0.5,0.9,1)",
              .defaultValue = "0.1,0.5,0.9,1",
              .list = true,
              .label = "Fractions"},
             {.flag = "--repeats",
              .kind = K::Count,
              .help = "Samples per length, fraction and state (default 3)",
              .defaultValue = "3"},
             {.flag = "--tiers",
              .kind = K::Text,
              .help = "gpu, offload or gpu,offload (default)",
              .defaultValue = "gpu,offload",
              .list = true},
             {.flag = "--concurrency",
              .kind = K::Count,
              .help = "Requests in flight; only 1 is measured",
              .defaultValue = "1"},
             {.flag = "--api-key-env",
              .kind = K::Text,
              .help = "Environment variable holding the API key (sent as a Bearer token)"},
             {.flag = "--timeout",
              .kind = K::Seconds,
              .help = "Per request (default 120s)",
              .defaultValue = "120s"},
             {.flag = "--out",
              .kind = K::Folder,
              .help = "Folder for serving.csv, calibration.json, pykvcache-v1.json, "
                      "pykvcache-v2.json",
              .label = "Write to",
              .placeholder = "no files"},
             {.flag = "--offload-tier",
              .kind = K::Choice,
              .help = "What the offload tier is: dram (CPU offload) or nvme (disk); names the "
                      "tier and picks py-kvcache's mem or ssd threshold",
              .defaultValue = "dram",
              .choices = {"dram", "nvme"}},
             {.flag = "--reset",
              .kind = K::Choice,
              .help =
                  "Clearing the GPU prefix cache: auto (llama.cpp's slot erase where GET /props "
                  "says llama-server, else vLLM's POST /reset_prefix_cache, else SGLang's POST "
                  "/flush_cache, else filler), llamacpp, vllm, sglang, filler",
              .defaultValue = "auto",
              .choices = {"auto", "llamacpp", "vllm", "sglang", "filler"}},
             {.flag = "--block-size",
              .kind = K::Count,
              .help = "Prefix-cache block in tokens (default 16, vLLM's)",
              .defaultValue = "16"},
             {.flag = "--retry-wait",
              .kind = K::Seconds,
              .help = "First wait after 429/503, doubled per try (default 1s; Retry-After wins)",
              .defaultValue = "1s"},
             {.flag = "--tries",
              .kind = K::Count,
              .help = "Tries per request on 429/503 (default 5)",
              .defaultValue = "5"},
             {.flag = "--warmup",
              .kind = K::Count,
              .help = "Cold requests sent first and not measured (default 2)",
              .defaultValue = "2"},
             {.flag = "--pause",
              .kind = K::Seconds,
              .help = "Idle time before each timed request (default 0s): a server that has "
                      "idled runs its next request slower on some machines, as a replay's "
                      "requests that find it idle do",
              .defaultValue = "0s"},
             {.flag = "--fit-on",
              .kind = K::Choice,
              .help = "What the fit takes of each point's repeats: median (default) or fastest "
                      "(for one-sided noise, e.g. the loopback stand-in on a busy machine)",
              .defaultValue = "median",
              .choices = {"median", "fastest"}},
             {.flag = "--allow-unverified-hits",
              .kind = K::Flag,
              .help = "Fit hits that neither the response nor /metrics verifies (labelled "
                      "UNVERIFIED in every output); without it they are reported and not fitted"},
             {.flag = "--drift-limit",
              .kind = K::Number,
              .help = "Largest move of the repeated reference point between the run's first "
                      "and last thirds, as a fraction (default 0.10); above it, where a rank test "
                      "tells the two apart at 1 %, no thresholds are written",
              .defaultValue = "0.10",
              .label = "Drift limit"},
             {.flag = "--config",
              .kind = K::Model,
              .help = "Model geometry for the fit: preset id, config.json or folder (default: "
                      "--model)",
              .label = "Model"},
         }});
    // The scenario flags, as every command that evaluates a scenario takes them
    // (kvbe/scenario/scenario_flags.h): the fit's GPU, FLOP model and nominal tiers. --model is
    // the served model's name here; the geometry comes from --config, else from it.
    for (const auto& f : scenarioFlagSpecs()) {
        if (f.flag == "--model") continue;
        const K kind = f.on                     ? K::Flag
                       : !f.choices.empty()     ? K::Choice
                       : f.flag == "--scenario" ? K::File
                                                : K::Text;
        c.back().options.push_back( // c.back(): serving, the entry just added
            {.flag = f.flag,
             .kind = kind,
             .help = f.help,
             .list = f.list != nullptr,
             .choices = f.choices});
    }

    c.push_back(
        {.key = "replay",
         .title = "Trace replay against live servers",
         .description = "Replay a request trace against live OpenAI-compatible servers, open "
                        "loop, routed as the replay's routers route: TTFT and cached tokens of "
                        "every request",
         .needs = "running OpenAI-compatible servers and a build with libcurl",
         .footer = "Sends traffic only to the --endpoint servers. Each block id of the trace "
                   "becomes a fixed run of token ids (derived\n"
                   "from the id), sent to /v1/completions, streamed; two requests that share their "
                   "first k blocks share exactly k runs.\n"
                   "Writes DIR/requests.jsonl (a line per request as it completes) and "
                   "DIR/replay.json (the summary); `kvbe-cli trace\n"
                   "replay TRACE --compare DIR` puts the model's prediction beside them.",
         .options = {
             {.flag = "--trace",
              .kind = K::File,
              .help = "The request trace (any format trace replay reads); also the first "
                      "argument",
              .required = true,
              .label = "Trace",
              .positional = true},
             {.flag = "--endpoint",
              .kind = K::Url,
              .help = "A server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1; "
                      "repeat it for a fleet",
              .list = true,
              .required = true,
              .label = "Endpoints",
              .placeholder = "http://127.0.0.1:8000/v1"},
             {.flag = "--model",
              .kind = K::Text,
              .help = "Served model name (as in /v1/models)",
              .required = true,
              .label = "Served model"},
             {.flag = "--out",
              .kind = K::Folder,
              .help = "Folder for requests.jsonl and replay.json",
              .required = true,
              .label = "Write to"},
             {.flag = "--router",
              .kind = K::Text,
              .help = "Where each request goes: round-robin (default), random, least-loaded, "
                      "session or sglang, with NAME:key=value as trace replay takes it",
              .defaultValue = "round-robin",
              .label = "Router"},
             {.flag = "--rate-scale",
              .kind = K::Number,
              .help = "Every arrival time divided by S (2: twice the load; default 1)",
              .defaultValue = "1",
              .label = "Rate scale"},
             {.flag = "--limit",
              .kind = K::Count,
              .help = "Only the trace's first N requests (default: all)",
              .label = "Requests",
              .placeholder = "all"},
             {.flag = "--duration-cap",
              .kind = K::Seconds,
              .help = "Only the requests arriving within this long of the first, e.g. 10min"},
             {.flag = "--block-tokens",
              .kind = K::Count,
              .help = "Tokens a block id becomes (default: the trace's own, e.g. 512 for "
                      "Mooncake); fewer scale every prompt down for a small engine",
              .label = "Block tokens",
              .placeholder = "the trace's"},
             {.flag = "--output-tokens",
              .kind = K::Text,
              .help = "Tokens each request asks for: a number (default 1) or trace (the "
                      "trace's output lengths)",
              .defaultValue = "1"},
             {.flag = "--vocab",
              .kind = K::Count,
              .help = "The model's vocabulary size; prompt token ids are drawn from [100, "
                      "vocab) (default 32000)",
              .defaultValue = "32000"},
             {.flag = "--max-in-flight",
              .kind = K::Count,
              .help = "Requests open at once; at this many a request is sent late and its "
                      "lateness recorded (default 256)",
              .defaultValue = "256"},
             {.flag = "--api-key-env",
              .kind = K::Text,
              .help = "Environment variable holding the API key (sent as a Bearer token)"},
             {.flag = "--timeout",
              .kind = K::Seconds,
              .help = "Per request (default 300s)",
              .defaultValue = "300s"},
         }});
    return c;
}
#pragma GCC diagnostic pop

} // namespace

std::string_view toString(ProbeOptionKind kind) {
    switch (kind) {
    case K::Bytes:
        return "bytes";
    case K::Tokens:
        return "tokens";
    case K::Count:
        return "count";
    case K::Number:
        return "number";
    case K::Seconds:
        return "seconds";
    case K::Folder:
        return "folder";
    case K::File:
        return "file";
    case K::Model:
        return "model";
    case K::Url:
        return "url";
    case K::Text:
        return "text";
    case K::Choice:
        return "choice";
    case K::Flag:
        return "flag";
    }
    return "text";
}

const ProbeOption* ProbeDescription::option(std::string_view flag) const {
    for (const auto& o : options)
        if (o.flag == flag) return &o;
    return nullptr;
}

const std::vector<ProbeDescription>& probeCatalog() {
    static const std::vector<ProbeDescription> catalog = makeCatalog();
    return catalog;
}

const ProbeDescription* findProbe(std::string_view key) {
    for (const auto& p : probeCatalog())
        if (p.key == key) return &p;
    return nullptr;
}

void ProbeArgs::set(std::string_view flag, std::string value) {
    m_values.insert_or_assign(std::string(flag), std::move(value));
}

bool ProbeArgs::given(std::string_view flag) const {
    return m_values.find(flag) != m_values.end();
}

std::string ProbeArgs::text(std::string_view flag) const {
    if (auto it = m_values.find(flag); it != m_values.end()) return it->second;
    const ProbeOption* o = m_probe->option(flag);
    return o ? std::string(o->defaultValue) : std::string();
}

bool ProbeArgs::on(std::string_view flag) const {
    return given(flag);
}

Result<int> ProbeArgs::count(std::string_view flag) const {
    // The probe checks its own range; here the value must be a whole number that an int holds.
    auto v =
        parseCount(text(flag), std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
    if (!v) return Error{std::string(flag) + " " + v.message()};
    return static_cast<int>(*v);
}

Result<double> ProbeArgs::number(std::string_view flag) const {
    auto v = parseNumber(text(flag));
    if (!v) return Error{std::string(flag) + " " + v.message()};
    return *v;
}

} // namespace kvbe
