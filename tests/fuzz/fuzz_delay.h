// A delay each input waits when KVBE_FUZZ_DELAY_MS is set: the floor test (fuzz_floor_trips)
// slows a target on purpose to show that scripts/fuzz fails a target running under its floor.
// Unset, it costs one branch an input.
#pragma once

#include <chrono>
#include <cstdlib>
#include <thread>

namespace kvbe::fuzz {

inline void delayIfAsked() {
    static const long ms = [] {
        const char* v = std::getenv("KVBE_FUZZ_DELAY_MS");
        return v ? std::strtol(v, nullptr, 10) : 0L;
    }();
    if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

} // namespace kvbe::fuzz
