#pragma once
// Where a server listens, as daemon.metrics and `mtmctl run --metrics` write it:
//   off              no listener
//   /run/mtm/m.sock  a Unix stream socket (an absolute path, at most kMaxSocketPath bytes)
//   127.0.0.1:9477   TCP on an IPv4 address; "localhost:PORT" is 127.0.0.1
//   [::1]:9477       TCP on an IPv6 address
// Port 0 lets the kernel pick a free port (the server reports which).

#include <cstdint>
#include <string>

#include "mtm/Result.h"

namespace mtm::config {

struct ListenAddress {
  enum class Kind { off, unix, tcp4, tcp6 };
  Kind kind = Kind::off;
  std::string path;  // unix
  std::string host;  // tcp: a numeric address
  uint16_t port = 0;

  // As written above ("[::1]:9477"); "off".
  std::string describe() const;
  bool operator==(const ListenAddress&) const = default;
};

// The error says what was expected: "expected off, an absolute socket path or HOST:PORT ...".
Result<ListenAddress> parseListenAddress(const std::string& text);

}  // namespace mtm::config
