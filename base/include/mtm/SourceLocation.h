#pragma once
// Where an Error was made: std::source_location where the standard library offers it. Clang 14
// with Debian 12's libstdc++ 12 (the libFuzzer builds, tools/fuzz) lacks it; there the same two
// facts come from the compiler's builtins.

#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
namespace mtm {
using SourceLocation = std::source_location;
}  // namespace mtm
#else
namespace mtm {
struct SourceLocation {
  static constexpr SourceLocation current(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
    return SourceLocation{file, line};
  }
  constexpr const char* file_name() const { return file_; }
  constexpr unsigned line() const { return line_; }
  const char* file_ = "";
  unsigned line_ = 0;
};
}  // namespace mtm
#endif
