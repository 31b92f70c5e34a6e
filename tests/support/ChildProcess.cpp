#include "ChildProcess.h"

#include "Run.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace mtm::test {

ChildProcess::ChildProcess(std::vector<std::string> argv, std::string stderrPath, int uid) : log_(std::move(stderrPath)) {
  // The constructor returns once the child has exec'd (its close-on-exec pipe end closes) or
  // died: a pid handed on before then still names a copy of the test, not the program.
  int execed[2] = {-1, -1};
  const bool piped = pipe2(execed, O_CLOEXEC) == 0;
  pid_ = fork();
  if (pid_ != 0 && piped) {
    close(execed[1]);
    char byte;
    while (pid_ > 0 && read(execed[0], &byte, 1) < 0 && errno == EINTR) {
    }
    close(execed[0]);
  }
  if (pid_ == 0) {
    int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    if (uid >= 0 && (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0)) _exit(126);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string ChildProcess::log() const { return readFile(log_); }

bool ChildProcess::waitForLog(const std::string& text, int count, double seconds) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string l = log();
    int seen = 0;
    for (size_t p = l.find(text); p != std::string::npos; p = l.find(text, p + 1)) ++seen;
    if (seen >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void ChildProcess::signal(int sig) const { kill(pid_, sig); }

int ChildProcess::wait() {
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string waitForFile(const std::string& path, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(path)) return readFile(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

}  // namespace mtm::test
