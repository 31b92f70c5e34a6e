// What mtmctl says when mtmd does not answer: a socket the test listens on itself.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "Run.h"
#include "mtm/daemon/ControlSocket.h"

namespace {

int listenAt(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  return fd;
}

}  // namespace

TEST_CASE("a request mtmd drops unanswered or never answers says which", "[daemon]") {
  mtm::test::TempDir dir;
  const std::string path = dir.path() + "/s";
  int server = listenAt(path);
  // Read, then closed without a word.
  std::thread reader([&] {
    int c = ::accept(server, nullptr, nullptr);
    char buf[16];
    while (::read(c, buf, sizeof buf) > 0) {
    }
    ::close(c);
  });
  auto dropped = mtm::daemon::controlRequest(path, "ping");
  reader.join();
  REQUIRE_FALSE(dropped.ok());
  CHECK(dropped.error().message() == "mtmd at " + path + " closed the connection without an answer (is it stopping? its log says why)");

  // Closed with the request unread: the kernel resets the connection.
  std::thread closer([&] {
    int c = ::accept(server, nullptr, nullptr);
    pollfd request{c, POLLIN, 0};
    ::poll(&request, 1, 5000);
    ::close(c);
  });
  auto reset = mtm::daemon::controlRequest(path, "ping");
  closer.join();
  REQUIRE_FALSE(reset.ok());
  CHECK(reset.error().message() == "lost the connection to mtmd at " + path + " before its answer: Connection reset by peer");

  // Accepted by the kernel (the backlog), never read: the client's timeout ends it.
  auto silent = mtm::daemon::controlRequest(path, "ping", std::chrono::milliseconds(200));
  REQUIRE_FALSE(silent.ok());
  CHECK(silent.error().message() == "mtmd at " + path + " gave no answer within 200 ms");
  ::close(server);
}
