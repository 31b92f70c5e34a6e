#pragma once
// The library's error: a cxlcclResult_t with a message saying what, where and what to do.

#include <sstream>
#include <string>
#include <utility>

#include "cxlccl.h"

namespace cxlccl {

template <typename... Parts>
std::string cat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

struct Status {
  cxlcclResult_t code = cxlcclSuccess;
  std::string message;

  bool ok() const { return code == cxlcclSuccess; }
  static Status success() { return {}; }
  template <typename... Parts>
  static Status error(cxlcclResult_t code, Parts&&... parts) {
    return {code, cat(std::forward<Parts>(parts)...)};
  }
  // errno's text appended: "open /dev/dax0.0: Permission denied".
  static Status system(const std::string& what, int err);
};

#define CXLCCL_TRY(expr)          \
  do {                            \
    ::cxlccl::Status s_ = (expr); \
    if (!s_.ok()) return s_;      \
  } while (0)

// Messages on stderr, "cxlccl: " first, by level: CXLCCL_DEBUG=NONE|WARN|INFO (default WARN).
enum class LogLevel { none, warn, info };
bool logEnabled(LogLevel level);
void logLine(LogLevel level, const std::string& line);
template <typename... Parts>
void warn(Parts&&... parts) {
  if (logEnabled(LogLevel::warn)) logLine(LogLevel::warn, cat(std::forward<Parts>(parts)...));
}
template <typename... Parts>
void info(Parts&&... parts) {
  if (logEnabled(LogLevel::info)) logLine(LogLevel::info, cat(std::forward<Parts>(parts)...));
}

}  // namespace cxlccl
