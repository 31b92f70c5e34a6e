// ExitWatch on real processes: a pidfd turns readable when its process exits, and only then.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "mtm/daemon/ExitWatch.h"

using mtm::daemon::ExitWatch;

namespace {

pid_t startSleeper() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  REQUIRE(pid > 0);
  return pid;
}

std::vector<pollfd> pollNow(const ExitWatch& w, int timeoutMs) {
  auto fds = w.pollFds();
  REQUIRE(::poll(fds.data(), fds.size(), timeoutMs) >= 0);
  return fds;
}

}  // namespace

TEST_CASE("ExitWatch reports a process when it exits and not before", "[daemon]") {
  ExitWatch w;
  const pid_t a = startSleeper();
  const pid_t b = startSleeper();
  REQUIRE(w.watch(a));
  REQUIRE(w.watch(b));
  CHECK(w.pollFds().size() == 2);
  CHECK(w.exited(pollNow(w, 0)).empty());

  ::kill(b, SIGKILL);
  ::waitpid(b, nullptr, 0);
  CHECK(w.exited(pollNow(w, 1000)) == std::vector<pid_t>{b});
  CHECK_FALSE(w.watching(b));
  CHECK(w.watching(a));
  CHECK(w.exited(pollNow(w, 0)).empty());

  w.forget(a);
  CHECK(w.pollFds().empty());
  ::kill(a, SIGKILL);
  ::waitpid(a, nullptr, 0);
}

TEST_CASE("ExitWatch cannot watch a process that is already gone", "[daemon]") {
  const pid_t gone = startSleeper();
  ::kill(gone, SIGKILL);
  ::waitpid(gone, nullptr, 0);
  ExitWatch w;
  CHECK_FALSE(w.watch(gone));
  CHECK(w.pollFds().empty());
}
