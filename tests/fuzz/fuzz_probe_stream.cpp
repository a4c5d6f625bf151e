// libFuzzer target: the probe-stream (JSON Lines) reader (see fuzz_bodies.h).
#include "fuzz_bodies.h"
#include "fuzz_delay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kvbe::fuzz::delayIfAsked();
    return kvbe::fuzz::fuzzProbeStream(data, size);
}
