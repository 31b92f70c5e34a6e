#include <catch2/catch.hpp>

#include <bpf/libbpf.h>
#include <numa.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

#include "mtm/Log.h"

using namespace mtm;

namespace {
// Captures what the one logger writes while it lives.
struct Capture {
  std::ostringstream text;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
  Capture() {
    log::setup("test", spdlog::level::debug);
    sink->set_pattern("%l %v");
    log::get().sinks().push_back(sink);
  }
  ~Capture() { log::setup("test", spdlog::level::info); }  // drop the sink before `text` goes
};
}  // namespace

TEST_CASE("libnuma's warnings reach the mtm logger", "[log]") {
  Capture c;
  REQUIRE(numa_available() >= 0);
  // An unparsable node string makes libnuma call numa_warn.
  struct bitmask* mask = numa_parse_nodestring("not-a-node");
  CHECK(mask == nullptr);
  CHECK(c.text.str().find("warning libnuma: ") != std::string::npos);
}

TEST_CASE("libbpf's messages reach the mtm logger", "[log]") {
  Capture c;
  const char garbage[] = "not an ELF object";
  bpf_object* obj = bpf_object__open_mem(garbage, sizeof garbage, nullptr);
  CHECK(libbpf_get_error(obj) != 0);
  CHECK(c.text.str().find("libbpf: ") != std::string::npos);
}

TEST_CASE("MTM_* macros log key=value lines at their level", "[log]") {
  Capture c;
  MTM_INFO("migrate pid={} pages={}", 42, 512);
  MTM_DEBUG("detail x={}", 1);
  MTM_TRACE("hidden");
  CHECK(c.text.str() == "info migrate pid=42 pages=512\ndebug detail x=1\n");
  spdlog::level::level_enum level{};
  CHECK(log::parseLevel("warn", level));
  CHECK(level == spdlog::level::warn);
  CHECK(log::parseLevel("error", level));
  CHECK(level == spdlog::level::err);
  CHECK_FALSE(log::parseLevel("loud", level));
}

TEST_CASE("rate limiting lets one message through per interval and counts the rest", "[log]") {
  using namespace std::chrono;
  log::RateLimit limit(seconds(10));
  steady_clock::time_point t0{};
  unsigned suppressed = 99;
  CHECK(limit.allow(t0 + seconds(100), suppressed));
  CHECK(suppressed == 0);
  CHECK_FALSE(limit.allow(t0 + seconds(101), suppressed));
  CHECK_FALSE(limit.allow(t0 + seconds(109), suppressed));
  CHECK(limit.allow(t0 + seconds(110), suppressed));
  CHECK(suppressed == 2);
}
