#pragma once
// One control-socket request line, parsed. The bytes are anyone's (the socket is open to all
// local users): the parser accepts exactly these forms and says what it expected otherwise.
//   ping | status [text|json] | attach PID | detach PID
//   cxl-pool | cxl-alloc NONCEHI NONCELO BYTES NRANKS | cxl-free NONCEHI NONCELO OFFSET GENERATION
// (nonces in hex, the rest decimal; NRANKS 0..64, 0 being a buffer; mtm/daemon/CxlPool.h).

#include <array>
#include <cstdint>
#include <string_view>

#include "mtm/Result.h"
#include "mtm/Table.h"

namespace mtm::daemon {

struct ControlRequest {
  enum class Verb { Ping, Status, Attach, Detach, CxlPool, CxlAlloc, CxlFree };
  Verb verb = Verb::Ping;
  int pid = 0;                   // attach, detach: 1 .. INT_MAX
  Format format = Format::Text;  // status
  // cxl-alloc: nonce high, nonce low, bytes, ranks; cxl-free: nonce high, nonce low, offset,
  // generation.
  std::array<uint64_t, 4> numbers{};
  bool cxl() const { return verb == Verb::CxlPool || verb == Verb::CxlAlloc || verb == Verb::CxlFree; }
};

inline constexpr const char* kRequestUsage = "expected one of: attach PID, detach PID, status text|json, ping";
inline constexpr const char* kCxlRequestUsage =
    "expected cxl-pool, cxl-alloc NONCEHI NONCELO BYTES NRANKS or cxl-free NONCEHI NONCELO OFFSET GENERATION";

Result<ControlRequest> parseControlRequest(std::string_view line);

}  // namespace mtm::daemon
