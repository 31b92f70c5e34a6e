// The control socket's request parser on the forms it accepts and on bytes it must refuse.
#include <catch2/catch.hpp>

#include <array>
#include <string>

#include "mtm/daemon/ControlRequest.h"

using mtm::daemon::ControlRequest;
using mtm::daemon::parseControlRequest;

TEST_CASE("control requests: the four forms parse, with any whitespace around their words", "[daemon]") {
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
}

TEST_CASE("control requests: anything else is refused with what was expected", "[daemon]") {
  auto error = [](std::string_view line) {
    auto r = parseControlRequest(line);
    REQUIRE_FALSE(r.ok());
    return r.error().message();
  };
  const std::string usage = "(expected one of: attach PID, detach PID, status text|json, ping)";
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
  const std::string cxlUsage = "(expected cxl-pool, cxl-alloc NONCEHI NONCELO BYTES NRANKS or cxl-free NONCEHI NONCELO OFFSET GENERATION)";
  CHECK(error("cxl-alloc ff 1a 2097152 65") == "cxl-alloc: nranks 65 is not 0..64 (0: a buffer)");
  CHECK(error("cxl-alloc xx 1a 2097152 2") == "bad request \"cxl-alloc xx 1a 2097152 2\" " + cxlUsage);
  CHECK(error("cxl-free 1 2 3") == "bad request \"cxl-free 1 2 3\" " + cxlUsage);
  CHECK(error("cxl-pool now") == "bad request \"cxl-pool now\" " + cxlUsage);
  CHECK(error("cxl-\x1b") == "bad request \"cxl-\\u001b\" " + cxlUsage);
}
