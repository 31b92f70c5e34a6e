#pragma once
// A program run in the background for a test: its stderr goes to a file; killed if still
// running when the object goes.

#include <sys/types.h>

#include <string>
#include <vector>

namespace mtm::test {

class ChildProcess {
 public:
  // argv[0] is a path. With `uid` >= 0 the child drops to that user (and its group) first.
  // Returns once the child has exec'd the program (or failed to, and exited).
  ChildProcess(std::vector<std::string> argv, std::string stderrPath, int uid = -1);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string log() const;
  // Waits up to `seconds` for `text` to appear `count` times in the log.
  bool waitForLog(const std::string& text, int count = 1, double seconds = 10) const;
  void signal(int sig) const;
  // Waits for the exit; the exit code, or 128 + signal.
  int wait();

 private:
  std::string log_;
  pid_t pid_ = -1;
};

// Waits up to `seconds` for a file to exist; its contents, or "" on timeout.
std::string waitForFile(const std::string& path, double seconds = 10);

}  // namespace mtm::test
