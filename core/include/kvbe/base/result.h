// An expected-style result: a value, or a sentence a user can act on.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kvbe {

struct Error {
    std::string message;
};

template <class T> class Result {
  public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Error error) : m_v(std::move(error)) {}

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

    const Error& error() const {
        assert(!ok());
        return std::get<1>(m_v);
    }
    const std::string& message() const { return error().message; }

  private:
    std::variant<T, Error> m_v;
};

struct Ok {};
using Status = Result<Ok>;

} // namespace kvbe
