#include "mtm/daemon/ControlRequest.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "mtm/Json.h"
#include "mtm/Parse.h"

namespace mtm::daemon {
namespace {

std::vector<std::string_view> wordsOf(std::string_view line) {
  std::vector<std::string_view> words;
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  for (size_t at = line.find_first_not_of(kSpace); at != std::string_view::npos; at = line.find_first_not_of(kSpace, at)) {
    const size_t end = std::min(line.find_first_of(kSpace, at), line.size());
    words.push_back(line.substr(at, end - at));
    at = end;
  }
  return words;
}

Result<int> pidOf(const std::vector<std::string_view>& words) {
  if (words.size() != 2) return Error("\"" + std::string(words[0]) + "\" takes one pid (" + kRequestUsage + ")");
  auto pid = parseUnsigned(words[1]);
  if (!pid || *pid == 0 || *pid > uint64_t(std::numeric_limits<int>::max()))
    return Error(jsonEscape(std::string(words[1].substr(0, 32))) + " is not a pid");
  return static_cast<int>(*pid);
}

// A cxl-alloc or cxl-free: two hex nonces and two decimal numbers.
Result<ControlRequest> cxlNumbers(const std::vector<std::string_view>& words, std::string_view line, ControlRequest r) {
  bool ok = words.size() == 5;
  for (size_t i = 0; ok && i < 4; ++i) {
    auto v = parseUnsigned(words[i + 1], i < 2 ? 16 : 10);
    ok = v.ok();
    if (ok) r.numbers[i] = *v;
  }
  if (!ok) return Error("bad request " + jsonEscape(std::string(line.substr(0, 64))) + " (" + kCxlRequestUsage + ")");
  if (r.verb == ControlRequest::Verb::CxlAlloc && r.numbers[3] > 64)
    return Error("cxl-alloc: nranks " + std::to_string(r.numbers[3]) + " is not 0..64 (0: a buffer)");
  return r;
}

// A hex address, with or without 0x.
Result<uint64_t> hexAddress(std::string_view w) {
  if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) w.remove_prefix(2);
  return parseUnsigned(w, 16);
}

// hint-phase PID N, hint-group PID START-END...: the pid, then a phase number or hex ranges.
Result<ControlRequest> hint(const std::vector<std::string_view>& words, ControlRequest r) {
  const bool phase = r.verb == ControlRequest::Verb::HintPhase;
  const char* usage = phase ? "hint-phase takes PID N (a phase number, 0 to 4294967295)"
                            : "hint-group takes PID and 1 to 64 ranges START-END (hex addresses, START < END)";
  if (words.size() < 3 || (phase && words.size() != 3) || (!phase && words.size() > 2 + kMaxHintRanges)) return Error(usage);
  auto pid = pidOf({words[0], words[1]});
  if (!pid) return std::move(pid).takeError();
  r.pid = *pid;
  if (phase) {
    auto n = parseUnsigned(words[2]);
    if (!n || *n > std::numeric_limits<uint32_t>::max()) return Error(jsonEscape(std::string(words[2].substr(0, 32))) + ": " + usage);
    r.phase = static_cast<uint32_t>(*n);
    return r;
  }
  for (size_t i = 2; i < words.size(); ++i) {
    const std::string_view w = words[i];
    const size_t dash = w.find('-');
    auto start = dash == std::string_view::npos ? Result<uint64_t>(Error("")) : hexAddress(w.substr(0, dash));
    auto end = dash == std::string_view::npos ? Result<uint64_t>(Error("")) : hexAddress(w.substr(dash + 1));
    if (!start || !end || *start >= *end) return Error(jsonEscape(std::string(w.substr(0, 64))) + ": " + usage);
    r.ranges.push_back({*start, *end});
  }
  return r;
}

}  // namespace

Result<ControlRequest> parseControlRequest(std::string_view line) {
  const auto words = wordsOf(line);
  if (words.empty()) return Error(std::string("empty request (") + kRequestUsage + ")");
  const std::string_view verb = words[0];
  ControlRequest r;
  if (verb == "ping" && words.size() == 1) return r;
  if (verb == "status") {
    if (words.size() > 2 || (words.size() == 2 && words[1] != "text" && words[1] != "json")) return Error("status takes text or json");
    r.verb = ControlRequest::Verb::Status;
    r.format = words.size() == 2 && words[1] == "json" ? Format::Json : Format::Text;
    return r;
  }
  if (verb == "attach" || verb == "detach") {
    auto pid = pidOf(words);
    if (!pid) return std::move(pid).takeError();
    r.verb = verb == "attach" ? ControlRequest::Verb::Attach : ControlRequest::Verb::Detach;
    r.pid = *pid;
    return r;
  }
  if (verb == "hint-phase" || verb == "hint-group") {
    r.verb = verb == "hint-phase" ? ControlRequest::Verb::HintPhase : ControlRequest::Verb::HintGroup;
    return hint(words, r);
  }
  if (verb == "cxl-pool" && words.size() == 1) {
    r.verb = ControlRequest::Verb::CxlPool;
    return r;
  }
  if (verb == "cxl-alloc" || verb == "cxl-free") {
    r.verb = verb == "cxl-alloc" ? ControlRequest::Verb::CxlAlloc : ControlRequest::Verb::CxlFree;
    return cxlNumbers(words, line, r);
  }
  if (verb.substr(0, 4) == "cxl-")
    return Error("bad request " + jsonEscape(std::string(line.substr(0, 64))) + " (" + kCxlRequestUsage + ")");
  return Error("unknown request " + jsonEscape(std::string(line.substr(0, 64))) + " (" + kRequestUsage + ")");
}

}  // namespace mtm::daemon
