#include "Status.h"

#include <strings.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cxlccl {

Status Status::system(const std::string& what, int err) { return error(cxlcclSystemError, what, ": ", std::strerror(err)); }

static LogLevel configuredLevel() {
  const char* value = std::getenv("CXLCCL_DEBUG");
  if (value == nullptr) return LogLevel::warn;
  if (strcasecmp(value, "NONE") == 0) return LogLevel::none;
  if (strcasecmp(value, "INFO") == 0 || strcasecmp(value, "TRACE") == 0) return LogLevel::info;
  return LogLevel::warn;
}

bool logEnabled(LogLevel level) {
  static const LogLevel configured = configuredLevel();
  return level <= configured && level != LogLevel::none;
}

void logLine(LogLevel level, const std::string& line) {
  std::fprintf(stderr, "cxlccl %s: %s\n", level == LogLevel::warn ? "WARN" : "INFO", line.c_str());
}

}  // namespace cxlccl
