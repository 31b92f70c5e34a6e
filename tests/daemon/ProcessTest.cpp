// Process identity and config target matching, on a /proc tree written by the test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "Run.h"
#include "mtm/daemon/Process.h"

using namespace mtm;

namespace {

void writeProcess(const test::TempDir& root, int pid, const std::string& comm, const std::string& uids) {
  std::filesystem::create_directories(root.path() + "/proc/" + std::to_string(pid));
  root.write("proc/" + std::to_string(pid) + "/status", "Name:\t" + comm + "\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t" + uids + "\n");
  root.write("proc/" + std::to_string(pid) + "/comm", comm + "\n");
}

}  // namespace

TEST_CASE("a process belongs to a user only when its real, effective and saved uids are that user", "[daemon]") {
  test::TempDir root;
  writeProcess(root, 42, "worker", "1000\t1000\t1000\t1000");
  writeProcess(root, 43, "passwd", "1000\t0\t0\t0");  // setuid root
  KernelFs fs(root.path());
  auto w = daemon::readProcessIdentity(fs, 42);
  REQUIRE(w.ok());
  CHECK(w->comm == "worker");
  CHECK(w->ownedBy(1000));
  CHECK(w->ownedBy(0));
  CHECK_FALSE(w->ownedBy(1001));
  auto p = daemon::readProcessIdentity(fs, 43);
  REQUIRE(p.ok());
  CHECK_FALSE(p->ownedBy(1000));
  auto gone = daemon::readProcessIdentity(fs, 44);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().message() == "pid 44 does not exist");
  CHECK(gone.error().errnum() == ESRCH);
}

TEST_CASE("kernel threads and the ids of a process's other threads are not processes mtm can manage", "[daemon]") {
  test::TempDir root;
  auto write = [&](int pid, const std::string& body) {
    std::filesystem::create_directories(root.path() + "/proc/" + std::to_string(pid));
    root.write("proc/" + std::to_string(pid) + "/status", body);
  };
  const std::string uids = "Uid:\t0\t0\t0\t0\n";
  write(2, "Name:\tkthreadd\nState:\tS (sleeping)\nTgid:\t2\n" + uids + "Kthread:\t1\n");  // 6.12
  write(3, "Name:\tkdamond.0\nState:\tS (sleeping)\nTgid:\t3\n" + uids);                   // 6.1: no mm
  write(50, "Name:\tworker\nState:\tS (sleeping)\nTgid:\t50\n" + uids + "VmSize:\t 1000 kB\n");
  write(51, "Name:\tworker\nState:\tS (sleeping)\nTgid:\t50\n" + uids + "VmSize:\t 1000 kB\n");  // a thread
  write(52, "Name:\tdone\nState:\tZ (zombie)\nTgid:\t52\n" + uids);                              // exited
  write(53, "Name:\tnew\nState:\tR (running)\nTgid:\t53\n" + uids + "VmSize:\t 8 kB\nKthread:\t0\n");
  KernelFs fs(root.path());
  auto check = [&](int pid) { return daemon::checkManageable(daemon::readProcessIdentity(fs, pid).value()); };
  CHECK(check(2).error().message() == "pid 2 (kthreadd) is a kernel thread: it has no user memory to manage");
  CHECK(check(2).error().errnum() == EINVAL);
  CHECK(check(3).error().message() == "pid 3 (kdamond.0) is a kernel thread: it has no user memory to manage");
  CHECK(check(50).ok());
  CHECK(check(51).error().message() ==
        "pid 51 (worker) is a thread of process 50: name the process (its memory is shared by all its threads)");
  CHECK(check(52).ok());  // a zombie is no kernel thread: attaching it finds it gone
  CHECK(check(53).ok());
}

TEST_CASE("config targets: pids that exist, every pid of a cgroup, exact command names", "[daemon]") {
  test::TempDir root;
  writeProcess(root, 10, "redis-server", "0\t0\t0\t0");
  writeProcess(root, 11, "redis-server-x", "0\t0\t0\t0");
  writeProcess(root, 12, "postgres", "0\t0\t0\t0");
  std::filesystem::create_directories(root.path() + "/sys/fs/cgroup/db.slice");
  root.write("sys/fs/cgroup/db.slice/cgroup.procs", "12\n13\n");
  config::TargetsConfig t;
  t.pids = {11, 99};
  t.cgroups = {"/sys/fs/cgroup/db.slice", "/sys/fs/cgroup/missing.slice"};
  t.commands = {"redis-server"};
  auto found = daemon::matchConfigTargets(t, KernelFs(root.path()));
  std::sort(found.begin(), found.end());
  REQUIRE(found.size() == 4);
  CHECK(found[0] == std::pair<int, std::string>{10, "command redis-server"});
  CHECK(found[1] == std::pair<int, std::string>{11, "config pid"});
  CHECK(found[2] == std::pair<int, std::string>{12, "cgroup /sys/fs/cgroup/db.slice"});
  CHECK(found[3] == std::pair<int, std::string>{13, "cgroup /sys/fs/cgroup/db.slice"});
}
