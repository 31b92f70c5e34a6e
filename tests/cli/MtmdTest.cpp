// mtmd as systemd runs it: a real process, real signals.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "Run.h"

using mtm::test::bin;
using mtm::test::run;

namespace {

class Daemon {
 public:
  Daemon(const std::string& logPath, std::vector<std::string> args) : log_(logPath) {
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Waits up to 10 s for `text` to appear `count` times in the log.
  bool waitFor(const std::string& text, int count = 1) const {
    for (int i = 0; i < 1000; ++i) {
      std::string l = log();
      int seen = 0;
      for (size_t p = l.find(text); p != std::string::npos; p = l.find(text, p + 1)) ++seen;
      if (seen >= count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void signal(int sig) const { kill(pid_, sig); }
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("mtmd logs the tiers, reloads on SIGHUP, keeps its config when the new one is broken, stops on SIGTERM", "[mtmd]") {
  mtm::test::TempDir dir;
  auto cfg = dir.write("mtm.yaml", "daemon:\n  log_level: info\n");
  Daemon d(dir.path() + "/log", {bin("mtmd"), "--config", cfg});
  REQUIRE(d.waitFor("ready"));
  CHECK(d.log().find("tier index=0 name=tier0") != std::string::npos);

  dir.write("mtm.yaml", "policy:\n  name: bogus\n");
  d.signal(SIGHUP);
  REQUIRE(d.waitFor("reload failed: keeping the previous config"));
  CHECK(d.log().find(cfg + ":2: policy.name: expected one of mtm, two_tier, none, got \"bogus\"") != std::string::npos);

  dir.write("mtm.yaml", "tiers:\n  list:\n    - {name: everything, nodes: 0}\n");
  d.signal(SIGHUP);
  REQUIRE(d.waitFor("reloaded config=" + cfg));
  CHECK(d.log().find("tier index=0 name=everything") != std::string::npos);

  d.signal(SIGTERM);
  CHECK(d.wait() == 0);
  CHECK(d.log().find("stop signal=SIGTERM") != std::string::npos);
}

TEST_CASE("mtmd refuses a broken config at start with a non-zero exit", "[mtmd]") {
  mtm::test::TempDir dir;
  auto cfg = dir.write("mtm.yaml", "profiler:\n  budget: lots\n");
  auto r = run({bin("mtmd"), "--config", cfg});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find(cfg + ":2: profiler.budget: expected a number in [0.0001, 1] or a percentage, got \"lots\"") != std::string::npos);

  auto check = run({bin("mtmd"), "--check-config", cfg});
  CHECK(check.exitCode == 1);
  auto plugins = run({bin("mtmd"), "--list-plugins"});
  CHECK(plugins.exitCode == 0);
  CHECK(plugins.out.find("policies:\n  none") != std::string::npos);
  auto bad = run({bin("mtmd"), "--log-level", "loud"});
  CHECK(bad.exitCode == 2);
}
