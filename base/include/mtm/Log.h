#pragma once
// The one logger of every mtm program. Messages carry key=value fields:
//   MTM_INFO("migrate pid={} pages={} to=node{}", pid, pages, node);
// On a terminal lines carry a timestamp; under systemd (JOURNAL_STREAM set) they carry a
// "<N>" syslog priority prefix instead, which journald turns into the entry's priority.
// Debug builds add file:line to each line.

#include <chrono>
#include <cstdarg>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace mtm::log {

enum class Target { Auto, Terminal, Journal };

// Makes the logger (idempotent). libbpf's and libnuma's messages reach it too: the profiler
// and the mover, which use those libraries, route them (LibbpfLog.cpp, LibnumaLog.cpp).
void setup(std::string_view program, spdlog::level::level_enum level = spdlog::level::info, Target target = Target::Auto);

spdlog::logger& get();

// A C library's printf-style message as one line (trailing newline and spaces dropped).
std::string formatCMessage(const char* fmt, va_list args);

// Parses "trace|debug|info|warn|error|off"; false when the name is unknown.
bool parseLevel(std::string_view name, spdlog::level::level_enum& out);

// Lets one message through per interval and counts the ones it held back.
class RateLimit {
 public:
  explicit RateLimit(std::chrono::steady_clock::duration interval) : interval_(interval) {}
  // True when a message may be logged now; `suppressed` then holds how many were held back.
  bool allow(std::chrono::steady_clock::time_point now, unsigned& suppressed);

 private:
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point next_{};
  unsigned held_ = 0;
};

}  // namespace mtm::log

#define MTM_TRACE(...) SPDLOG_LOGGER_TRACE(&::mtm::log::get(), __VA_ARGS__)
#define MTM_DEBUG(...) SPDLOG_LOGGER_DEBUG(&::mtm::log::get(), __VA_ARGS__)
#define MTM_INFO(...) SPDLOG_LOGGER_INFO(&::mtm::log::get(), __VA_ARGS__)
#define MTM_WARN(...) SPDLOG_LOGGER_WARN(&::mtm::log::get(), __VA_ARGS__)
#define MTM_ERROR(...) SPDLOG_LOGGER_ERROR(&::mtm::log::get(), __VA_ARGS__)
