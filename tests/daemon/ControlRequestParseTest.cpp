// The control socket's request parser on the forms it accepts and on bytes it must refuse.
#include <catch2/catch.hpp>

#include <array>
#include <string>

#include "mtm/daemon/ControlRequest.h"

using mtm::daemon::ControlRequest;
using mtm::daemon::parseControlRequest;

TEST_CASE("control requests: every form parses, with any whitespace around their words", "[daemon]") {
  auto ping = parseControlRequest("ping\n");
  REQUIRE(ping.ok());
  CHECK(ping->verb == ControlRequest::Verb::Ping);
  auto status = parseControlRequest("  status\tjson \r\n");
  REQUIRE(status.ok());
  CHECK(status->verb == ControlRequest::Verb::Status);
  CHECK(status->format == mtm::Format::Json);
  CHECK(parseControlRequest("status")->format == mtm::Format::Text);
  auto attach = parseControlRequest("attach 2147483647");
  REQUIRE(attach.ok());
  CHECK(attach->verb == ControlRequest::Verb::Attach);
  CHECK(attach->pid == 2147483647);
  CHECK(parseControlRequest("detach 7")->verb == ControlRequest::Verb::Detach);
  CHECK(parseControlRequest("cxl-pool")->cxl());
  auto alloc = parseControlRequest("cxl-alloc ff 1a 2097152 64");
  REQUIRE(alloc.ok());
  CHECK(alloc->verb == ControlRequest::Verb::CxlAlloc);
  CHECK(alloc->numbers == std::array<uint64_t, 4>{0xff, 0x1a, 2097152, 64});
  auto release = parseControlRequest("cxl-free 1 2 4194304 3");
  REQUIRE(release.ok());
  CHECK(release->verb == ControlRequest::Verb::CxlFree);
  CHECK(release->numbers == std::array<uint64_t, 4>{1, 2, 4194304, 3});
  auto phase = parseControlRequest("hint-phase 42 4294967295\n");
  REQUIRE(phase.ok());
  CHECK(phase->verb == ControlRequest::Verb::HintPhase);
  CHECK(phase->pid == 42);
  CHECK(phase->phase == 4294967295u);
  auto group = parseControlRequest("hint-group 42 7f0000000000-7f0000200000 0x7f1000000000-0X7F1000001000");
  REQUIRE(group.ok());
  CHECK(group->verb == ControlRequest::Verb::HintGroup);
  REQUIRE(group->ranges.size() == 2);
  CHECK(group->ranges[0].start == 0x7f0000000000);
  CHECK(group->ranges[1].end == 0x7f1000001000);
}

TEST_CASE("control requests: anything else is refused with what was expected", "[daemon]") {
  auto error = [](std::string_view line) {
    auto r = parseControlRequest(line);
    REQUIRE_FALSE(r.ok());
    return r.error().message();
  };
  const std::string usage =
      "(expected one of: attach PID, detach PID, status text|json, ping, hint-phase PID N, hint-group PID START-END...)";
  CHECK(error("") == "empty request " + usage);
  CHECK(error(" \n") == "empty request " + usage);
  CHECK(error("ping 1") == "unknown request \"ping 1\" " + usage);
  CHECK(error("status yaml") == "status takes text or json");
  CHECK(error("attach") == "\"attach\" takes one pid " + usage);
  CHECK(error("attach 1 2") == "\"attach\" takes one pid " + usage);
  CHECK(error("attach 0") == "\"0\" is not a pid");
  CHECK(error("detach 2147483648") == "\"2147483648\" is not a pid");
  CHECK(error("attach 0x10") == "\"0x10\" is not a pid");
  CHECK(error(std::string("attach \x1b[2J", 11)) == "\"\\u001b[2J\" is not a pid");
  CHECK(error(std::string("\0ping", 5)) == "unknown request \"\\u0000ping\" " + usage);
  const std::string phaseUsage = "hint-phase takes PID N (a phase number, 0 to 4294967295)";
  const std::string groupUsage = "hint-group takes PID and 1 to 64 ranges START-END (hex addresses, START < END)";
  CHECK(error("hint-phase 42") == phaseUsage);
  CHECK(error("hint-phase 42 4294967296") == "\"4294967296\": " + phaseUsage);
  CHECK(error("hint-phase 0 1") == "\"0\" is not a pid");
  CHECK(error("hint-group 42") == groupUsage);
  CHECK(error("hint-group 42 2000-1000") == "\"2000-1000\": " + groupUsage);
  CHECK(error("hint-group 42 1000") == "\"1000\": " + groupUsage);
  CHECK(error("hint-group 42 0x-1000") == "\"0x-1000\": " + groupUsage);
  std::string tooMany = "hint-group 42";
  for (int i = 0; i < 65; ++i) tooMany += " 1000-2000";
  CHECK(error(tooMany) == groupUsage);
  const std::string cxlUsage = "(expected cxl-pool, cxl-alloc NONCEHI NONCELO BYTES NRANKS or cxl-free NONCEHI NONCELO OFFSET GENERATION)";
  CHECK(error("cxl-alloc ff 1a 2097152 65") == "cxl-alloc: nranks 65 is not 0..64 (0: a buffer)");
  CHECK(error("cxl-alloc xx 1a 2097152 2") == "bad request \"cxl-alloc xx 1a 2097152 2\" " + cxlUsage);
  CHECK(error("cxl-free 1 2 3") == "bad request \"cxl-free 1 2 3\" " + cxlUsage);
  CHECK(error("cxl-pool now") == "bad request \"cxl-pool now\" " + cxlUsage);
  CHECK(error("cxl-\x1b") == "bad request \"cxl-\\u001b\" " + cxlUsage);
}
