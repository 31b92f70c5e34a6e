// Real move_pages(2) on this one-node machine: placement queries, moves that land where the
// pages already are, pages never touched, a dead pid, another user's process.
#include <catch2/catch.hpp>

#include <numaif.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>

#include "ChildProcess.h"
#include "Run.h"
#include "mtm/migrate/LiveKernel.h"
#include "mtm/migrate/MovePagesMover.h"

using namespace mtm::test;

namespace {

struct Writer {
  TempDir dir;
  ChildProcess proc;
  std::string ready;
  std::string thpRange, baseRange;

  explicit Writer(const std::string& size = "32M")
      : proc({bin("mtm-test-writer"), "--size", size, "--ready", dir.path() + "/ready"}, dir.path() + "/log") {
    ready = waitForFile(dir.path() + "/ready");
    REQUIRE(!ready.empty());
    thpRange = field("thp");
    baseRange = field("base");
  }
  std::string field(const std::string& key) const {
    auto p = ready.find(key + "=") + key.size() + 1;
    return ready.substr(p, ready.find_first_of(" \n", p) - p);
  }
  std::string pid() const { return std::to_string(proc.pid()); }
  // Stops the writer; it checks every byte it wrote.
  void verify() {
    proc.signal(SIGTERM);
    CHECK(proc.wait() == 0);
    CHECK(proc.log().find("wrong_words=0") != std::string::npos);
  }
};

}  // namespace

TEST_CASE("placement finds every resident page of a process on node 0", "[migrate][host]") {
  Writer w;
  auto r = run({bin("mtmctl"), "placement", "--pid", w.pid(), "--range", w.thpRange, "--range", w.baseRange, "-f", "json"});
  REQUIRE(r.exitCode == 0);
  YAML::Node doc = YAML::Load(r.out);
  REQUIRE(doc["nodes"].size() == 1);
  CHECK(doc["nodes"][0]["node"].as<int>() == 0);
  CHECK(doc["nodes"][0]["total_bytes"].as<uint64_t>() == 32u << 20);
  CHECK(doc["not_present_bytes"].as<uint64_t>() == 0);
  CHECK(doc["thp_detection"].as<std::string>() == "pagemap_scan");
  w.verify();
}

TEST_CASE("migrate to the node the pages are on moves every page, huge pages whole, and corrupts nothing", "[migrate][host]") {
  Writer w;
  auto r = run({bin("mtmctl"), "migrate", "--pid", w.pid(), "--range", w.thpRange, "--range", w.baseRange, "--to", "0", "--threads", "2",
                "--batch", "64", "-f", "json"});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  YAML::Node doc = YAML::Load(r.out);
  CHECK(doc["pages_requested"].as<uint64_t>() == 8192);
  CHECK(doc["pages_moved"].as<uint64_t>() == 8192);
  CHECK(doc["errors"].size() == 0);
  // THPs: each one is one address (fewer calls than 4 KiB pages would need).
  const uint64_t thps = doc["thp_moved_whole"].as<uint64_t>();
  CHECK(doc["move_pages_calls"].as<uint64_t>() == (8192 - thps * 512 + thps + 63) / 64);
  w.verify();
}

TEST_CASE("pages never touched fail with ENOENT and land on no node -- the touched ones where they lie", "[migrate][host]") {
  // This process's own 4 MiB of 4 KiB pages, the first 2 MiB written, moved to the node they are on.
  constexpr uint64_t kMiB = 1 << 20;
  void* mem = mmap(nullptr, 4 * kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mem != MAP_FAILED);
  REQUIRE(madvise(mem, 4 * kMiB, MADV_NOHUGEPAGE) == 0);
  std::memset(mem, 1, 2 * kMiB);
  int node = -1;
  REQUIRE(get_mempolicy(&node, nullptr, 0, mem, MPOL_F_NODE | MPOL_F_ADDR) == 0);
  const auto base = reinterpret_cast<uint64_t>(mem);
  mtm::MoveRequest req;
  req.pid = getpid();
  req.ranges = {{base, base + 4 * kMiB}};
  req.toNode = node;
  mtm::migrate::LiveKernel kernel;
  mtm::migrate::MovePagesMover mover({kernel.deps(), mtm::migrate::MoverOptions{}, {}});
  const mtm::MoveStats st = mover.execute({req}, {});
  munmap(mem, 4 * kMiB);
  CHECK(st.pagesMoved == 2 * kMiB / 4096);
  CHECK(st.failed.at(ENOENT) == 2 * kMiB / 4096);
  CHECK(st.landings == std::vector<mtm::Landing>{{0, base, base + 2 * kMiB, node}, {0, base + 2 * kMiB, base + 4 * kMiB, -1}});
}

TEST_CASE("a dead pid is a clear error with exit 1", "[migrate][host]") {
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  auto r = run({bin("mtmctl"), "migrate", "--pid", std::to_string(child), "--all", "--to", "0"});
  CHECK(r.exitCode == 1);
  CHECK(r.err == "mtmctl: pid " + std::to_string(child) + " does not exist\n");
  auto p = run({bin("mtmctl"), "placement", "--pid", std::to_string(child)});
  CHECK(p.exitCode == 1);
}

TEST_CASE("another user's process may not be touched", "[migrate][host]") {
  // As root: drop to nobody and target a root process. Otherwise: target pid 1 (root's).
  TempDir dir;
  chmod(dir.path().c_str(), 0755);
  const std::string ctl = dir.path() + "/mtmctl";
  std::filesystem::copy_file(bin("mtmctl"), ctl);
  const bool root = geteuid() == 0;
  const std::string target = root ? std::to_string(getpid()) : "1";
  for (const auto& cmd : std::vector<std::vector<std::string>>{{ctl, "migrate", "--pid", target, "--all", "--to", "0"},
                                                               {ctl, "placement", "--pid", target}}) {
    ChildProcess p(cmd, dir.path() + "/log", root ? 65534 : -1);
    CHECK(p.wait() == 1);
    CHECK(p.log().find("/smaps: Permission denied: run as root or as the process's owner") != std::string::npos);
  }
}

TEST_CASE("root refused for want of CAP_SYS_PTRACE is told so, not to run as root", "[migrate][host]") {
  if (geteuid() != 0) {  // the other side of the rule: a user is told to run as root
    auto r = run({bin("mtmctl"), "placement", "--pid", "1"});
    CHECK(r.exitCode == 1);
    CHECK(r.err.find("Permission denied: run as root or as the process's owner") != std::string::npos);
    return;
  }
  TempDir dir;
  ChildProcess sleeper({"/bin/sleep", "30"}, dir.path() + "/sleep.log", 65534);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto r = run({"/usr/bin/setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace", bin("mtmctl"), "placement", "--pid",
                std::to_string(sleeper.pid())});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find(": refused although running as root (without CAP_SYS_PTRACE?") != std::string::npos);
}

TEST_CASE("a process that exits mid-migration ends the move with a clear error, not a hang", "[migrate][host]") {
  Writer w("32M");
  TempDir dir;
  // 4 MiB/s over 32 MiB: eight seconds of work, cut short after one.
  ChildProcess ctl({bin("mtmctl"), "migrate", "--pid", w.pid(), "--range", w.thpRange, "--range", w.baseRange, "--to", "0", "--rate",
                    "4MiB/s", "--batch", "16"},
                   dir.path() + "/log");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  w.proc.signal(SIGKILL);
  CHECK(ctl.wait() == 1);
  CHECK(ctl.log().find("mtmctl: pid " + w.pid() + ": the process exited during migration; ") != std::string::npos);
}
