#pragma once
// Result<T>: a value or an Error. The error remembers where it was made and gathers context
// as it travels up: "read /proc/42/maps: No such process -- while scanning pid 42".

#include <string>
#include <utility>
#include <variant>

#include "mtm/Check.h"
#include "mtm/SourceLocation.h"

namespace mtm {

class Error {
 public:
  explicit Error(std::string message, int errnum = 0, SourceLocation where = SourceLocation::current());

  // An error for a failed system call: "<what>: <strerror(errnum)>".
  static Error fromErrno(std::string what, int errnum, SourceLocation where = SourceLocation::current());

  // Appends "-- while <what>" context; the first message stays first.
  Error& context(const std::string& what) &;
  Error&& context(const std::string& what) &&;

  const std::string& message() const { return message_; }
  int errnum() const { return errnum_; }  // 0 unless it came from a system call
  const char* file() const { return where_.file_name(); }
  unsigned line() const { return where_.line(); }

 private:
  std::string message_;
  int errnum_;
  SourceLocation where_;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    MTM_CHECK(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    MTM_CHECK(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    MTM_CHECK(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    MTM_CHECK(!ok());
    return std::get<1>(v_);
  }
  Error&& takeError() && {
    MTM_CHECK(!ok());
    return std::get<1>(std::move(v_));
  }

  T valueOr(T fallback) const& { return ok() ? std::get<0>(v_) : std::move(fallback); }

  Result&& context(const std::string& what) && {
    if (!ok()) std::get<1>(v_).context(what);
    return std::move(*this);
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    MTM_CHECK(!ok_);
    return error_;
  }
  Error&& takeError() && {
    MTM_CHECK(!ok_);
    return std::move(error_);
  }

  Result&& context(const std::string& what) && {
    if (!ok_) error_.context(what);
    return std::move(*this);
  }

 private:
  Error error_{""};
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace mtm
