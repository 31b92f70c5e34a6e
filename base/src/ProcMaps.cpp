#include "mtm/ProcMaps.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "mtm/Parse.h"

namespace mtm {
namespace {

bool hex(std::string_view s, uint64_t& out) {
  if (s.substr(0, 2) == "0x" || s.substr(0, 2) == "0X") s.remove_prefix(2);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

std::string_view nextField(std::string_view& line) {
  auto begin = line.find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(begin);
  auto space = line.find(' ');
  auto field = line.substr(0, space);
  line = space == std::string_view::npos ? std::string_view{} : line.substr(space);
  return field;
}

// A maps line; false when it is not one (an smaps "Key: value" line).
bool parseMapsLine(std::string_view line, Vma& vma) {
  auto range = nextField(line);
  auto perms = nextField(line);
  auto offset = nextField(line);
  auto dev = nextField(line);
  auto inode = nextField(line);
  auto dash = range.find('-');
  if (dash == std::string_view::npos || perms.size() != 4 || dev.find(':') == std::string_view::npos || inode.empty()) return false;
  if (!hex(range.substr(0, dash), vma.start) || !hex(range.substr(dash + 1), vma.end) || !hex(offset, vma.offset)) return false;
  vma.perms = std::string(perms);
  vma.path = std::string(trim(line));
  return true;
}

Result<std::vector<Vma>> parse(std::string_view text, bool smaps) {
  std::vector<Vma> vmas;
  size_t lineNo = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineNo;
    if (trim(line).empty()) continue;
    Vma vma;
    if (parseMapsLine(line, vma)) {
      vmas.push_back(vma);
      continue;
    }
    auto colon = line.find(':');
    if (!smaps || vmas.empty() || colon == std::string_view::npos)
      return Error("line " + std::to_string(lineNo) + ": not a maps line: \"" + std::string(line) + "\"");
    auto key = line.substr(0, colon);
    auto value = trim(line.substr(colon + 1));
    auto kb = [&]() -> uint64_t {
      auto sp = value.find(' ');
      return parseUnsigned(value.substr(0, sp)).valueOr(0) * 1024;
    };
    if (key == "KernelPageSize")
      vmas.back().kernelPageSize = kb();
    else if (key == "AnonHugePages")
      vmas.back().anonHugeBytes = kb();
    else if (key == "Rss")
      vmas.back().rssBytes = kb();
  }
  return vmas;
}

}  // namespace

Result<std::vector<Vma>> parseMaps(std::string_view text) { return parse(text, false); }
Result<std::vector<Vma>> parseSmaps(std::string_view text) { return parse(text, true); }

Error processFileError(int pid, const Error& readError) {
  const int err = readError.errnum();
  // Root refused too lacks CAP_SYS_PTRACE (a narrowed bounding set, a container) or meets a
  // Yama or LSM rule: telling it to run as root would not help.
  const char* denied = ::geteuid() == 0
                           ? ": refused although running as root (without CAP_SYS_PTRACE? a container, Yama's ptrace_scope or an LSM?)"
                           : ": run as root or as the process's owner";
  const char* hint = err == ENOENT || err == ESRCH ? ": no such process" : err == EACCES || err == EPERM ? denied : "";
  return Error("pid " + std::to_string(pid) + ": " + readError.message() + hint, err);
}

Result<std::vector<Vma>> readProcessVmas(const KernelFs& fs, int pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/smaps";
  auto text = fs.read(path);
  if (!text) return processFileError(pid, text.error());
  auto vmas = parseSmaps(*text);
  if (!vmas) return Error("pid " + std::to_string(pid) + ": " + path + ": " + vmas.error().message());
  return vmas;
}

Result<std::pair<uint64_t, uint64_t>> parseAddressRange(std::string_view text) {
  auto t = trim(text);
  auto dash = t.find('-');
  uint64_t a = 0, b = 0;
  if (dash == std::string_view::npos || !hex(t.substr(0, dash), a) || !hex(t.substr(dash + 1), b) || b <= a)
    return Error("expected an address range like 0x7f0000000000-0x7f0010000000 (start below end), got \"" + std::string(t) + "\"");
  return std::make_pair(a, b);
}

}  // namespace mtm
