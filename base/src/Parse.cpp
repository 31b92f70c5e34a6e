#include "mtm/Parse.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

namespace mtm {
namespace {

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// "1.5" -> 1.5; only digits and one dot.
bool parseDecimal(std::string_view s, double& out) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return false;
  if (std::count(s.begin(), s.end(), '.') > 1) return false;
  if (!std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; })) return false;
  out = std::stod(std::string(s));
  return true;
}

}  // namespace

std::string_view trim(std::string_view s) {
  const char* ws = " \t\n\r";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::optional<size_t> firstNonText(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) return i;
      ++i;
      continue;
    }
    // Lead byte: how many continuation bytes follow, and the smallest code point it may encode.
    const size_t extra = c >= 0xf0 && c <= 0xf4 ? 3 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xc2 && c <= 0xdf ? 1 : 0;
    if (extra == 0 || extra >= s.size() - i) return i;  // a stray byte, or the text ends inside the sequence
    uint32_t cp = c & (0x3f >> extra);
    for (size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3f);
    }
    const uint32_t least = extra == 1 ? 0x80 : extra == 2 ? 0x800 : 0x10000;
    if (cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += extra + 1;
  }
  return std::nullopt;
}

Result<uint64_t> parseUnsigned(std::string_view text, int base) {
  auto t = trim(text);
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) return Error("expected an unsigned integer, got " + quoted(t));
  return v;
}

Result<std::vector<int>> parseNodeList(std::string_view text) {
  std::set<int> nodes;
  const auto whole = trim(text);
  auto t = whole;
  auto bad = [&] { return Error("expected a node list like 0,2-3, got " + quoted(whole)); };
  while (!t.empty()) {
    auto comma = t.find(',');
    auto item = trim(t.substr(0, comma));
    t = comma == std::string_view::npos ? std::string_view{} : t.substr(comma + 1);
    auto dash = item.find('-');
    auto first = parseUnsigned(item.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : parseUnsigned(item.substr(dash + 1));
    if (!first || !last || *last < *first || *last > 4095) return bad();
    for (auto n = *first; n <= *last; ++n) nodes.insert(static_cast<int>(n));
    if (comma != std::string_view::npos && t.empty()) return bad();
  }
  return std::vector<int>(nodes.begin(), nodes.end());
}

std::string formatNodeList(const std::vector<int>& nodes) {
  std::string out;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(nodes[i]);
    if (j > i) out += "-" + std::to_string(nodes[j]);
    i = j + 1;
  }
  return out;
}

Result<uint64_t> parseSize(std::string_view text) {
  auto t = trim(text);
  auto bad = [&] { return Error("expected a size like 512MiB or 2G, got " + quoted(t)); };
  size_t i = 0;
  while (i < t.size() && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.')) ++i;
  double number = 0;
  if (!parseDecimal(t.substr(0, i), number)) return bad();
  std::string unit(trim(t.substr(i)));
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::pair<const char*, int> kUnits[] = {{"", 0},    {"B", 0}, {"K", 1},  {"KB", 1},  {"KIB", 1}, {"M", 2},  {"MB", 2},
                                                       {"MIB", 2}, {"G", 3}, {"GB", 3}, {"GIB", 3}, {"T", 4},   {"TB", 4}, {"TIB", 4}};
  for (const auto& [name, power] : kUnits) {
    if (unit != name) continue;
    double bytes = number * std::pow(1024.0, power);
    if (bytes >= 18446744073709551615.0) return bad();
    if (bytes != std::floor(bytes)) return Error("expected a whole number of bytes, got " + quoted(t));
    return static_cast<uint64_t>(bytes);
  }
  return bad();
}

Result<uint64_t> parseRate(std::string_view text) {
  auto t = trim(text);
  if (t.size() < 2 || t.substr(t.size() - 2) != "/s") return Error("expected a rate like 512MiB/s, got " + quoted(t));
  auto size = parseSize(t.substr(0, t.size() - 2));
  if (!size) return Error("expected a rate like 512MiB/s, got " + quoted(t));
  return *size;
}

Result<double> parsePercent(std::string_view text) {
  auto t = trim(text);
  double v = 0;
  if (t.empty() || t.back() != '%' || !parseDecimal(trim(t.substr(0, t.size() - 1)), v) || v > 100)
    return Error("expected a percentage in [0%, 100%], got " + quoted(t));
  return v / 100.0;
}

std::string formatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

Result<std::map<std::string, uint64_t>> parseNodeMeminfo(std::string_view text) {
  std::map<std::string, uint64_t> out;
  size_t lineNo = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineNo;
    if (line.empty()) continue;
    // "Node 0 MemTotal:       514356 kB"
    char key[64];
    unsigned long long value = 0;
    int node = 0;
    char unit[8] = "";
    std::string l(line);
    int n = std::sscanf(l.c_str(), "Node %d %63[^:]: %llu %7s", &node, key, &value, unit);
    if (n < 3) return Error("line " + std::to_string(lineNo) + ": expected \"Node N Key: value [kB]\", got " + quoted(line));
    out[key] = std::string(unit) == "kB" ? value * 1024 : value;
  }
  return out;
}

Result<std::vector<int>> parseIntRow(std::string_view text) {
  std::vector<int> row;
  auto t = trim(text);
  while (!t.empty()) {
    auto end = t.find_first_of(" \t");
    auto item = t.substr(0, end);
    auto v = parseUnsigned(item);
    if (!v || *v > 65535) return Error("expected whitespace-separated integers, got " + quoted(trim(text)));
    row.push_back(static_cast<int>(*v));
    t = end == std::string_view::npos ? std::string_view{} : trim(t.substr(end));
  }
  return row;
}

Result<std::string> parseBracketChoice(std::string_view text) {
  auto t = trim(text);
  auto open = t.find('[');
  auto close = t.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos)
    return Error("expected one choice in [brackets], got " + quoted(t));
  return std::string(t.substr(open + 1, close - open - 1));
}

}  // namespace mtm
