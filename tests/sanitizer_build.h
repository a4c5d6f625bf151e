// Whether a test was built with AddressSanitizer: GCC says so with __SANITIZE_ADDRESS__, clang
// (the sanitizer tree's compiler) only with __has_feature(address_sanitizer).
#pragma once

namespace kvbe::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

} // namespace kvbe::test
