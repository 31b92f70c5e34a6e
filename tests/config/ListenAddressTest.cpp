// daemon.metrics and `mtmctl run --metrics`: the listen addresses mtm accepts, and the errors of
// those it does not.
#include <catch2/catch.hpp>

#include "mtm/config/ConfigLoader.h"
#include "mtm/config/ListenAddress.h"

using mtm::config::ListenAddress;
using mtm::config::parseListenAddress;

TEST_CASE("listen addresses: off, a Unix socket, IPv4 and IPv6 with a port", "[config]") {
  CHECK(parseListenAddress("off")->kind == ListenAddress::Kind::off);
  auto unix = parseListenAddress("/run/mtm/metrics.sock");
  REQUIRE(unix.ok());
  CHECK(unix->kind == ListenAddress::Kind::unix);
  CHECK(unix->describe() == "/run/mtm/metrics.sock");
  auto v4 = parseListenAddress("127.0.0.1:9477");
  REQUIRE(v4.ok());
  CHECK(v4->kind == ListenAddress::Kind::tcp4);
  CHECK(v4->port == 9477);
  CHECK(parseListenAddress("localhost:0")->describe() == "127.0.0.1:0");
  auto v6 = parseListenAddress("[::1]:9477");
  REQUIRE(v6.ok());
  CHECK(v6->kind == ListenAddress::Kind::tcp6);
  CHECK(v6->host == "::1");
  CHECK(v6->describe() == "[::1]:9477");
}

TEST_CASE("listen addresses that are not say what is expected", "[config]") {
  const std::string expected = "expected off, an absolute Unix socket path, IPV4:PORT or [IPV6]:PORT (port 0-65535)";
  CHECK(parseListenAddress("9477").error().message() == expected + ", got \"9477\"");
  CHECK(parseListenAddress("127.0.0.1:65536").error().message() == expected + ", got \"127.0.0.1:65536\"");
  CHECK(parseListenAddress("127.0.0.1:").error().message() == expected + ", got \"127.0.0.1:\"");
  CHECK(parseListenAddress("metrics.example:9477").error().message() ==
        "\"metrics.example\" is not an IPv4 address (in \"metrics.example:9477\"; an IPv6 one goes in brackets: [::1]:PORT)");
  CHECK(parseListenAddress("[::g]:1").error().message() == "\"::g\" is not an IPv6 address (in \"[::g]:1\")");
  CHECK(parseListenAddress("relative/m.sock").error().message() == expected + ", got \"relative/m.sock\"");
  CHECK(parseListenAddress("/" + std::string(107, 's')).error().message() ==
        "expected a socket path of at most 107 bytes (a Unix socket's limit), got 108");
}

TEST_CASE("daemon.metrics is checked with its line -- the default listens on loopback", "[config]") {
  auto bad = mtm::config::parseConfig("daemon:\n  metrics: 0.0.0.0\n", "mtm.yaml");
  REQUIRE(!bad.ok());
  CHECK(bad.error().message() ==
        "mtm.yaml:2: daemon.metrics: expected off, an absolute Unix socket path, IPV4:PORT or [IPV6]:PORT (port 0-65535), got \"0.0.0.0\"");
  auto defaults = mtm::config::parseConfig("", "mtm.yaml");
  REQUIRE(defaults.ok());
  CHECK(defaults->daemon.metrics == "127.0.0.1:9477");
}
