// An expected-style result: a value, or a failure a user can act on. One template for every
// failure kind: Result<T> fails with an Error (a sentence); a probe's step returns
// ExitResult<T> (kvbe/probes/probe.h), the same template failing with a ProbeOutcome, which also
// carries the exit code the failure maps to. A failure type has a `message` sentence.
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace kvbe {

struct Error {
    std::string message;
};

template <class T, class E = Error> class Result {
  public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
    Result(E error) : m_v(std::in_place_index<1>, std::move(error)) {}
    // A failure of another kind that converts to E (an Error into a RequestError, which then
    // names no field), so `return r.error()` works across kinds.
    // (enable_if, not requires: the CUDA sources include this too, as C++17.)
    template <class U,
              std::enable_if_t<!std::is_same_v<std::decay_t<U>, E> &&
                                   !std::is_same_v<std::decay_t<U>, T> &&
                                   !std::is_convertible_v<U, T> && std::is_convertible_v<U, E>,
                               int> = 0>
    Result(U&& error) : m_v(std::in_place_index<1>, E(std::forward<U>(error))) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(m_v);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(m_v);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(m_v));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const E& error() const {
        assert(!ok());
        return std::get<1>(m_v);
    }
    const std::string& message() const { return error().message; }

  private:
    std::variant<T, E> m_v;
};

struct Ok {};
using Status = Result<Ok>;

} // namespace kvbe
