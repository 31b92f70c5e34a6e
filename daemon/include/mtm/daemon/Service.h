#pragma once
// What mtmd needs from its surroundings: one instance at a time, and systemd's notify protocol.

#include <chrono>
#include <optional>
#include <string>

#include "mtm/Result.h"
#include "mtm/UniqueFd.h"

namespace mtm::daemon {

// An exclusive flock on a lock file holding the owner's pid. Released when the process dies,
// so a kill -9 never leaves a stale lock.
class InstanceLock {
 public:
  // Error when another process holds it: "another mtmd (pid N) holds /run/mtm/mtmd.lock".
  static Result<InstanceLock> acquire(const std::string& path);

 private:
  explicit InstanceLock(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

// sd_notify(3) without libsystemd: a datagram to $NOTIFY_SOCKET. Does nothing (false) when
// not started by systemd with Type=notify.
bool notifySystemd(const std::string& state);

// Half of $WATCHDOG_USEC when systemd asks for keep-alives for this process, else nothing.
std::optional<std::chrono::milliseconds> watchdogPeriod();

}  // namespace mtm::daemon
