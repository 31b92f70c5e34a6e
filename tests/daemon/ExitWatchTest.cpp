// ExitWatch on real processes: a pidfd turns readable when its process exits, and only then.
#include <catch2/catch.hpp>

#include <csignal>

#include "ChildProcess.h"
#include "Run.h"
#include "mtm/daemon/ExitWatch.h"

using mtm::daemon::ExitWatch;
using mtm::test::ChildProcess;

namespace {

struct Sleeper : mtm::test::TempDir, ChildProcess {
  Sleeper() : ChildProcess({"/bin/sleep", "30"}, path() + "/stderr") {}
};

std::vector<pollfd> pollNow(const ExitWatch& w, int timeoutMs) {
  auto fds = w.pollFds();
  REQUIRE(::poll(fds.data(), fds.size(), timeoutMs) >= 0);
  return fds;
}

}  // namespace

TEST_CASE("ExitWatch reports a process when it exits and not before", "[daemon]") {
  ExitWatch w;
  Sleeper a, b;
  auto aFd = mtm::openPidfd(a.pid()), bFd = mtm::openPidfd(b.pid());
  REQUIRE(aFd.ok());
  REQUIRE(bFd.ok());
  w.watch(a.pid(), *aFd);
  w.watch(b.pid(), *bFd);
  CHECK(w.pollFds().size() == 2);
  CHECK(w.exited(pollNow(w, 0)).empty());

  const pid_t bPid = b.pid();  // wait() forgets it
  b.signal(SIGKILL);
  b.wait();
  CHECK(w.exited(pollNow(w, 1000)) == std::vector<pid_t>{bPid});
  CHECK_FALSE(w.watching(bPid));
  CHECK(w.watching(a.pid()));
  CHECK(w.exited(pollNow(w, 0)).empty());

  w.forget(a.pid());
  CHECK(w.pollFds().empty());
}

TEST_CASE("a process that is already gone has no pidfd to watch, and a null one is not watched", "[daemon]") {
  Sleeper gone;
  const pid_t pid = gone.pid();  // wait() forgets it
  gone.signal(SIGKILL);
  gone.wait();
  auto fd = mtm::openPidfd(pid);
  REQUIRE_FALSE(fd.ok());
  CHECK(fd.error().message() == "pid " + std::to_string(pid) + ": pidfd_open: No such process");
  ExitWatch w;
  w.watch(pid, nullptr);
  CHECK_FALSE(w.watching(pid));
  CHECK(w.pollFds().empty());
}
