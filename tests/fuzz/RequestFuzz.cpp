// Fuzz target: mtmd's control-socket request parser on any bytes, as any local user may send
// them (at most kMaxRequest bytes a line). Nothing may crash or hang; an accepted request has a
// pid where it takes one and none elsewhere, a cxl-alloc at most 64 ranks, a hint-group 1 to 64
// ranges each with START < END (and ranges nowhere else); an error message
// carries no raw control character (it is written back to the client's terminal and to mtmd's
// log).
//
// Built with libFuzzer by tools/fuzz (clang: -fsanitize=fuzzer,address,undefined); built without
// it, tests/fuzz/FuzzReplay.cpp replays the committed corpus (tests/fuzz/corpus/request).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mtm/daemon/ControlRequest.h"
#include "mtm/daemon/ControlSocket.h"

namespace {

[[noreturn]] void broken(const char* what, std::string_view input) {
  std::fprintf(stderr, "request fuzz: %s (input of %zu bytes)\n", what, input.size());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > mtm::daemon::kMaxRequest) return 0;  // the server drops longer lines unread
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  using Verb = mtm::daemon::ControlRequest::Verb;
  auto request = mtm::daemon::parseControlRequest(line);
  if (request) {
    const bool needsPid = request->verb == Verb::Attach || request->verb == Verb::Detach || request->verb == Verb::HintPhase ||
                          request->verb == Verb::HintGroup;
    if (needsPid != (request->pid > 0)) broken("a pid where none belongs, or none where one does", line);
    if (request->verb == Verb::CxlAlloc && request->numbers[3] > 64) broken("a cxl-alloc of more than 64 ranks", line);
    const bool group = request->verb == Verb::HintGroup;
    if (group != !request->ranges.empty() || request->ranges.size() > mtm::daemon::kMaxHintRanges)
      broken("hint ranges where none belong, none where they do, or more than 64", line);
    for (const auto& r : request->ranges)
      if (r.start >= r.end) broken("a hint range that ends before it starts", line);
    return 0;
  }
  for (unsigned char c : request.error().message())
    if (c < 0x20 || c == 0x7f) broken("a control character in an error message", line);
  return 0;
}
