#include "mtm/Log.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace mtm::log {
namespace {

// stderr lines with a syslog priority prefix ("<3>...") for journald.
class JournalSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    std::fprintf(stderr, "<%d>%.*s", priority(msg.level), static_cast<int>(line.size()), line.data());
  }
  void flush_() override { std::fflush(stderr); }

 private:
  static int priority(spdlog::level::level_enum level) {
    switch (level) {
      case spdlog::level::critical:
        return 2;
      case spdlog::level::err:
        return 3;
      case spdlog::level::warn:
        return 4;
      case spdlog::level::info:
        return 6;
      default:
        return 7;
    }
  }
};

std::shared_ptr<spdlog::logger>& instance() {
  static std::shared_ptr<spdlog::logger> logger;
  return logger;
}

// "%*": " [file.cpp:42]" where the message was made, when known; nothing otherwise.
class SourceFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    if (msg.source.empty()) return;
    std::string_view file = msg.source.filename;
    if (auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
    const std::string text = " [" + std::string(file) + ":" + std::to_string(msg.source.line) + "]";
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SourceFlag>(); }
};

#ifdef NDEBUG
constexpr const char* kSource = "";
#else
constexpr const char* kSource = "%*";
#endif

}  // namespace

std::string formatCMessage(const char* fmt, va_list args) {
  char buf[1024];
  int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  std::string s(buf, n < 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void setup(std::string_view program, spdlog::level::level_enum level, Target target) {
  auto& logger = instance();
  if (target == Target::Auto) {
    target = std::getenv("JOURNAL_STREAM") != nullptr ? Target::Journal : Target::Terminal;
  }
  spdlog::sink_ptr sink;
  std::string pattern;
  if (target == Target::Journal) {
    sink = std::make_shared<JournalSink>();
    pattern = std::string("%v") + kSource;
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    pattern = std::string("%Y-%m-%d %H:%M:%S.%e %n %l: %v") + kSource;
  }
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<SourceFlag>('*').set_pattern(pattern);
  sink->set_formatter(std::move(formatter));
  logger = std::make_shared<spdlog::logger>(std::string(program), sink);
  logger->set_level(level);
  logger->flush_on(spdlog::level::warn);
}

spdlog::logger& get() {
  auto& logger = instance();
  if (!logger) setup("mtm");
  return *logger;
}

bool parseLevel(std::string_view name, spdlog::level::level_enum& out) {
  static const std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  for (const auto& [n, level] : kLevels) {
    if (n == name) {
      out = level;
      return true;
    }
  }
  return false;
}

bool RateLimit::allow(std::chrono::steady_clock::time_point now, unsigned& suppressed) {
  if (now < next_) {
    ++held_;
    return false;
  }
  suppressed = held_;
  held_ = 0;
  next_ = now + interval_;
  return true;
}

}  // namespace mtm::log
