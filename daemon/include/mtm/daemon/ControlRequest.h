#pragma once
// One control-socket request line, parsed: "ping", "status [text|json]", "attach PID",
// "detach PID". The bytes are anyone's (the socket is open to all local users): the parser
// accepts exactly these forms and says what it expected otherwise.

#include <string_view>

#include "mtm/Result.h"
#include "mtm/Table.h"

namespace mtm::daemon {

struct ControlRequest {
  enum class Verb { Ping, Status, Attach, Detach };
  Verb verb = Verb::Ping;
  int pid = 0;                   // attach, detach: 1 .. INT_MAX
  Format format = Format::Text;  // status
};

inline constexpr const char* kRequestUsage = "expected one of: attach PID, detach PID, status text|json, ping";

Result<ControlRequest> parseControlRequest(std::string_view line);

}  // namespace mtm::daemon
