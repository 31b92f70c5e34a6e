// The control socket's request parser on the forms it accepts and on bytes it must refuse.
#include <catch2/catch.hpp>

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
}
