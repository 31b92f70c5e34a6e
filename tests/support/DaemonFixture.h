#pragma once
// mtmd in the foreground on a config of its own: socket, lock and log in a temporary directory
// (tests never touch /run/mtm), metrics on a port the kernel picks.

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "ChildProcess.h"
#include "Run.h"

namespace mtm::test {

// The config's daemon section comes first: `extra` may continue it ("  cxl_pool: ...").
inline std::string daemonConfig(const TempDir& dir, const std::string& extra = "", const std::string& metrics = "127.0.0.1:0") {
  ::chmod(dir.path().c_str(), 0755);  // other users' mtmctl reads the config and reaches the socket
  return dir.write("mtm.yaml", "daemon:\n  socket: " + dir.path() + "/mtmd.sock\n  lock_file: " + dir.path() +
                                   "/mtmd.lock\n  metrics: " + metrics + "\n" + extra);
}

struct Daemon {
  TempDir dir;
  std::string config;
  std::unique_ptr<ChildProcess> process;
  explicit Daemon(const std::string& extra = "", const std::string& metrics = "127.0.0.1:0") : config(daemonConfig(dir, extra, metrics)) {
    process = std::make_unique<ChildProcess>(std::vector<std::string>{bin("mtmd"), "--config", config}, dir.path() + "/log");
    REQUIRE(process->waitForLog("ready socket="));
  }
  std::string socket() const { return dir.path() + "/mtmd.sock"; }
  RunResult ctl(std::vector<std::string> args) const {
    args.insert(args.begin(), {bin("mtmctl"), "--config", config});
    return run(args);
  }
};

}  // namespace mtm::test
