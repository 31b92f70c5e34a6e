#pragma once
// One control-socket request line, parsed. The bytes are anyone's (the socket is open to all
// local users): the parser accepts exactly these forms and says what it expected otherwise.
//   ping | status [text|json] | attach PID | detach PID
//   hint-phase PID N | hint-group PID START-END [START-END ...]   (predictive placement)
//   cxl-pool | cxl-alloc NONCEHI NONCELO BYTES NRANKS | cxl-free NONCEHI NONCELO OFFSET GENERATION
// (nonces and addresses in hex, the rest decimal; NRANKS 0..64, 0 being a buffer;
// mtm/daemon/CxlPool.h; at most kMaxHintRanges ranges, each START < END).

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "mtm/MoveRequest.h"
#include "mtm/Result.h"
#include "mtm/Table.h"

namespace mtm::daemon {

struct ControlRequest {
  enum class Verb { Ping, Status, Attach, Detach, HintPhase, HintGroup, CxlPool, CxlAlloc, CxlFree };
  Verb verb = Verb::Ping;
  int pid = 0;                       // attach, detach, hints: 1 .. INT_MAX
  uint32_t phase = 0;                // hint-phase
  std::vector<AddressRange> ranges;  // hint-group
  Format format = Format::Text;      // status
  // cxl-alloc: nonce high, nonce low, bytes, ranks; cxl-free: nonce high, nonce low, offset,
  // generation.
  std::array<uint64_t, 4> numbers{};
  bool cxl() const { return verb == Verb::CxlPool || verb == Verb::CxlAlloc || verb == Verb::CxlFree; }
};

inline constexpr const char* kRequestUsage =
    "expected one of: attach PID, detach PID, status text|json, ping, hint-phase PID N, hint-group PID START-END...";
inline constexpr size_t kMaxHintRanges = 64;
inline constexpr const char* kCxlRequestUsage =
    "expected cxl-pool, cxl-alloc NONCEHI NONCELO BYTES NRANKS or cxl-free NONCEHI NONCELO OFFSET GENERATION";

Result<ControlRequest> parseControlRequest(std::string_view line);

}  // namespace mtm::daemon
