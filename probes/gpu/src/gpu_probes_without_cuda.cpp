// A kvbe-cli built without the CUDA toolkit: the GPU probes are listed, and each explains in one
// sentence why it cannot run, with exit code 3 like a machine without a GPU.
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/probes/stream.h"

namespace kvbe::gpu {
namespace {
const char* kNoCuda = "this kvbe-cli was built without CUDA, so the GPU probes cannot run; rebuild "
                      "it on a machine with the CUDA toolkit (cmake -DKVBE_WITH_CUDA=ON)";

probes::ProbeOutcome refuse(probes::ProbeSink& sink) {
    sink.error(kNoCuda);
    return {probes::ExitCode::CannotRun, kNoCuda};
}
} // namespace

bool builtWithCuda() {
    return false;
}

Status GpuCopyProbe::available() const {
    return Error{kNoCuda};
}
Status GemmPeakProbe::available() const {
    return Error{kNoCuda};
}
Status PrefillProbe::available() const {
    return Error{kNoCuda};
}

probes::ProbeOutcome GpuCopyProbe::run(const probes::ProbeOptions&, probes::ProbeSink& sink) {
    return refuse(sink);
}
probes::ProbeOutcome GemmPeakProbe::run(const probes::ProbeOptions&, probes::ProbeSink& sink) {
    return refuse(sink);
}
probes::ProbeOutcome PrefillProbe::run(const probes::ProbeOptions&, probes::ProbeSink& sink) {
    return refuse(sink);
}

} // namespace kvbe::gpu
