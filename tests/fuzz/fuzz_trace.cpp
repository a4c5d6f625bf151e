// libFuzzer target: the trace readers and the cache replay (see fuzz_trace_body.h).
#include "fuzz_delay.h"
#include "fuzz_trace_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    kvbe::fuzz::delayIfAsked();
    return kvbe::fuzz::fuzzTraceWays(data, size, kvbe::fuzz::FuzzWays::OneWay);
}
