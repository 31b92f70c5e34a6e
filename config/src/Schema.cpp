#include "Schema.h"

#include <cstdio>

#include "mtm/Parse.h"

namespace mtm::config::schema {
namespace {

bool scalar(const YAML::Node& n, const std::string& path, const std::string& expected, Context& ctx) {
  if (n.IsScalar()) return true;
  ctx.fail(n, path, "expected " + expected + ", got " + describe(n));
  return false;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The shortest exact spelling: 512MiB, 2GiB, 4096.
std::string sizeText(uint64_t v) {
  static const char* kUnits[] = {"", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && v != 0 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + kUnits[u];
}

}  // namespace

std::string describe(const YAML::Node& n) {
  if (n.IsNull()) return "nothing";
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  constexpr size_t kShown = 60;  // a message names the value; it does not repeat a megabyte of it
  const std::string& v = n.Scalar();
  if (v.size() > kShown) return "\"" + v.substr(0, kShown) + "...\" (" + std::to_string(v.size()) + " characters)";
  return "\"" + v + "\"";
}

bool readUnsigned(const YAML::Node& n, const std::string& path, uint64_t min, uint64_t max, uint64_t& out, Context& ctx) {
  const std::string expected = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!scalar(n, path, expected, ctx)) return false;
  auto v = parseUnsigned(n.Scalar());
  if (!v || *v < min || *v > max) {
    ctx.fail(n, path, "expected " + expected + ", got " + describe(n));
    return false;
  }
  out = *v;
  return true;
}

bool Fraction::read(const YAML::Node& n, const std::string& path, double& out, Context& ctx) const {
  const std::string expected = "a number in [" + number(min) + ", " + number(max) + "] or a percentage";
  if (!scalar(n, path, expected, ctx)) return false;
  const std::string& s = n.Scalar();
  double v = 0;
  if (!s.empty() && s.back() == '%') {
    auto p = parsePercent(s);
    if (p)
      v = *p;
    else
      v = -1;
  } else {
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) v = -1;
  }
  if (!(v >= min && v <= max)) {
    ctx.fail(n, path, "expected " + expected + ", got " + describe(n));
    return false;
  }
  out = v;
  return true;
}

void Fraction::write(YAML::Emitter& e, double v) const { e << number(v); }

bool Size::read(const YAML::Node& n, const std::string& path, uint64_t& out, Context& ctx) const {
  if (!scalar(n, path, "a size like 512MiB or 2G", ctx)) return false;
  auto v = parseSize(n.Scalar());
  if (!v) {
    ctx.fail(n, path, v.error().message());
    return false;
  }
  out = *v;
  return true;
}

void Size::write(YAML::Emitter& e, uint64_t v) const { e << sizeText(v); }

bool Rate::read(const YAML::Node& n, const std::string& path, uint64_t& out, Context& ctx) const {
  if (!scalar(n, path, "a rate like 512MiB/s", ctx)) return false;
  auto v = parseRate(n.Scalar());
  if (!v || *v == 0) {
    ctx.fail(n, path, v ? "expected a rate above 0, got " + describe(n) : v.error().message());
    return false;
  }
  out = *v;
  return true;
}

void Rate::write(YAML::Emitter& e, uint64_t v) const { e << sizeText(v) + "/s"; }

bool Bool::read(const YAML::Node& n, const std::string& path, bool& out, Context& ctx) const {
  if (!scalar(n, path, "true or false", ctx)) return false;
  const std::string& s = n.Scalar();
  if (s == "true" || s == "false") {
    out = s == "true";
    return true;
  }
  ctx.fail(n, path, "expected true or false, got " + describe(n));
  return false;
}

bool Text::read(const YAML::Node& n, const std::string& path, std::string& out, Context& ctx) const {
  const char* expected = absolutePath ? "an absolute path" : "a non-empty string";
  if (!scalar(n, path, expected, ctx)) return false;
  const std::string& s = n.Scalar();
  if (s.empty() && allowEmpty) {
    out.clear();
    return true;
  }
  if (s.empty() || (absolutePath && s.front() != '/')) {
    ctx.fail(n, path, std::string("expected ") + expected + ", got " + describe(n));
    return false;
  }
  if (auto at = firstNonText(s)) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(s[*at]));
    ctx.fail(n, path,
             "byte " + std::string(byte) + " at offset " + std::to_string(*at) +
                 " is a control character or not UTF-8: a config value is printable text");
    return false;
  }
  out = s;
  return true;
}

bool Choice::read(const YAML::Node& n, const std::string& path, std::string& out, Context& ctx) const {
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  const std::string expected = "one of " + list;
  if (!scalar(n, path, expected, ctx)) return false;
  for (const auto& c : choices) {
    if (c == n.Scalar()) {
      out = c;
      return true;
    }
  }
  ctx.fail(n, path, "expected " + expected + ", got " + describe(n));
  return false;
}

bool NodeList::read(const YAML::Node& n, const std::string& path, std::vector<int>& out, Context& ctx) const {
  std::string text;
  if (n.IsSequence()) {
    for (const auto& item : n) {
      if (!item.IsScalar()) {
        ctx.fail(item, path, "expected a node number, got " + describe(item));
        return false;
      }
      text += (text.empty() ? "" : ",") + item.Scalar();
    }
  } else if (n.IsScalar()) {
    text = n.Scalar();
  } else {
    ctx.fail(n, path, "expected a node list like 0,2-3, got " + describe(n));
    return false;
  }
  auto v = parseNodeList(text);
  if (!v || v->empty()) {
    ctx.fail(n, path, "expected a node list like 0,2-3, got " + describe(n));
    return false;
  }
  out = *v;
  return true;
}

void NodeList::write(YAML::Emitter& e, const std::vector<int>& v) const { e << YAML::DoubleQuoted << formatNodeList(v); }

bool PidList::read(const YAML::Node& n, const std::string& path, std::vector<int>& out, Context& ctx) const {
  if (n.IsNull()) return true;
  if (!n.IsSequence()) {
    ctx.fail(n, path, "expected a list of process ids, got " + describe(n));
    return false;
  }
  out.clear();
  for (const auto& item : n) {
    uint64_t pid = 0;
    if (!readUnsigned(item, path, 1, 4194304, pid, ctx)) return false;
    out.push_back(static_cast<int>(pid));
  }
  return true;
}

void PidList::write(YAML::Emitter& e, const std::vector<int>& v) const {
  e << YAML::Flow << YAML::BeginSeq;
  for (int pid : v) e << pid;
  e << YAML::EndSeq;
}

bool TextList::read(const YAML::Node& n, const std::string& path, std::vector<std::string>& out, Context& ctx) const {
  if (n.IsNull()) return true;
  if (!n.IsSequence()) {
    ctx.fail(n, path, "expected a list, got " + describe(n));
    return false;
  }
  out.clear();
  for (const auto& itemNode : n) {
    std::string s;
    if (choices.empty() ? !item.read(itemNode, path, s, ctx) : !Choice{{}, choices}.read(itemNode, path, s, ctx)) return false;
    out.push_back(s);
  }
  return true;
}

void TextList::write(YAML::Emitter& e, const std::vector<std::string>& v) const {
  e << YAML::Flow << YAML::BeginSeq;
  for (const auto& s : v) e << s;
  e << YAML::EndSeq;
}

}  // namespace mtm::config::schema
