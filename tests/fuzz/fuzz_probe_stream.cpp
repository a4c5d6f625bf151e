// libFuzzer target: the probe-stream (JSON Lines) reader (see fuzz_bodies.h).
#include "fuzz_bodies.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return kvbe::fuzz::fuzzProbeStream(data, size);
}
