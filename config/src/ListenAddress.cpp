#include "mtm/config/ListenAddress.h"

#include <arpa/inet.h>

#include <charconv>

#include "mtm/config/Config.h"

namespace mtm::config {

namespace {

const char* const kExpected = "expected off, an absolute Unix socket path, IPV4:PORT or [IPV6]:PORT (port 0-65535)";

Result<uint16_t> parsePort(const std::string& text, const std::string& whole) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > 65535)
    return Error(std::string(kExpected) + ", got \"" + whole + "\"");
  return static_cast<uint16_t>(value);
}

}  // namespace

std::string ListenAddress::describe() const {
  switch (kind) {
    case Kind::off:
      return "off";
    case Kind::unix:
      return path;
    case Kind::tcp4:
      return host + ":" + std::to_string(port);
    case Kind::tcp6:
      return "[" + host + "]:" + std::to_string(port);
  }
  return "off";
}

Result<ListenAddress> parseListenAddress(const std::string& text) {
  ListenAddress a;
  if (text == "off") return a;
  if (!text.empty() && text[0] == '/') {
    if (text.size() > kMaxSocketPath)
      return Error("expected a socket path of at most " + std::to_string(kMaxSocketPath) + " bytes (a Unix socket's limit), got " +
                   std::to_string(text.size()));
    a.kind = ListenAddress::Kind::unix;
    a.path = text;
    return a;
  }
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return Error(std::string(kExpected) + ", got \"" + text + "\"");
  auto port = parsePort(text.substr(colon + 1), text);
  if (!port) return std::move(port).takeError();
  a.port = *port;
  std::string host = text.substr(0, colon);
  unsigned char buf[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    a.kind = ListenAddress::Kind::tcp6;
    a.host = host.substr(1, host.size() - 2);
    if (inet_pton(AF_INET6, a.host.c_str(), buf) == 1) return a;
    return Error("\"" + a.host + "\" is not an IPv6 address (in \"" + text + "\")");
  }
  a.kind = ListenAddress::Kind::tcp4;
  a.host = host == "localhost" ? "127.0.0.1" : host;
  if (inet_pton(AF_INET, a.host.c_str(), buf) == 1) return a;
  return Error("\"" + host + "\" is not an IPv4 address (in \"" + text + "\"; an IPv6 one goes in brackets: [::1]:PORT)");
}

}  // namespace mtm::config
