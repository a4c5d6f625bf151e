// A tiny Qt-free test harness for the GPU tests (GPU servers rarely have Qt): named test
// functions, CHECK macros that record and go on, and a main that returns 0, 1, or 77 (skipped).
#pragma once

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace kvbe::test {

struct Case {
    const char* name;
    std::function<void()> fn;
};
inline std::vector<Case>& cases() {
    static std::vector<Case> all;
    return all;
}
inline int& failures() {
    static int n = 0;
    return n;
}
struct Register {
    Register(const char* name, std::function<void()> fn) {
        cases().push_back({name, std::move(fn)});
    }
};

inline void fail(const char* file, int line, const std::string& what) {
    std::printf("    FAIL %s:%d: %s\n", file, line, what.c_str());
    ++failures();
}

inline bool near(double a, double b, double rel, double abs = 0) {
    return std::fabs(a - b) <= std::max(abs, rel * std::max(std::fabs(a), std::fabs(b)));
}

// Runs every case (or those whose name contains argv[1]); returns the process exit code.
inline int runAll(int argc, char** argv) {
    int ran = 0;
    for (const auto& c : cases()) {
        if (argc > 1 && std::string(c.name).find(argv[1]) == std::string::npos) continue;
        const int before = failures();
        std::printf("  %s\n", c.name);
        c.fn();
        std::printf("  %s %s\n", failures() == before ? "PASS" : "FAIL", c.name);
        ++ran;
    }
    std::printf("%d cases, %d failed checks\n", ran, failures());
    return failures() == 0 ? 0 : 1;
}

} // namespace kvbe::test

#define KVBE_CAT2(a, b) a##b
#define KVBE_CAT(a, b) KVBE_CAT2(a, b)
#define TEST_CASE(name)                                                                            \
    static void KVBE_CAT(test_, __LINE__)();                                                       \
    static ::kvbe::test::Register KVBE_CAT(reg_, __LINE__)(name, KVBE_CAT(test_, __LINE__));       \
    static void KVBE_CAT(test_, __LINE__)()

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) ::kvbe::test::fail(__FILE__, __LINE__, #cond);                                \
    } while (0)
#define CHECK_MSG(cond, msg)                                                                       \
    do {                                                                                           \
        if (!(cond)) ::kvbe::test::fail(__FILE__, __LINE__, std::string(#cond) + ": " + (msg));    \
    } while (0)
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        const auto va_ = (a);                                                                      \
        const auto vb_ = (b);                                                                      \
        if (!(va_ == vb_))                                                                         \
            ::kvbe::test::fail(__FILE__, __LINE__,                                                 \
                               std::string(#a " == " #b ": ") + std::to_string(va_) + " vs " +     \
                                   std::to_string(vb_));                                           \
    } while (0)
#define CHECK_NEAR(a, b, rel)                                                                      \
    do {                                                                                           \
        const double va_ = (a), vb_ = (b);                                                         \
        if (!::kvbe::test::near(va_, vb_, rel))                                                    \
            ::kvbe::test::fail(__FILE__, __LINE__,                                                 \
                               std::string(#a " ≈ " #b ": ") + std::to_string(va_) + " vs " +      \
                                   std::to_string(vb_));                                           \
    } while (0)
