#pragma once
// Test support: run a program and collect its exit code and output; paths of the build.

#include <sys/un.h>

#include <string>
#include <vector>

namespace mtm::test {

// True in a build with AddressSanitizer, whose quarantine keeps freed memory resident: a process's
// RSS then grows without any leak and says nothing about one.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

struct RunResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) with argv; stdin is /dev/null.
RunResult run(const std::vector<std::string>& argv);

// The address of the Unix socket at `path` (truncated to sun_path's size).
sockaddr_un unixAddress(const std::string& path);

// A whole file; "" when it cannot be read.
std::string readFile(const std::string& path);

// A program of this build: bin("mtmctl").
std::string bin(const std::string& name);
// A fixture tree: fixture("vm-6.12-4node-hmat").
std::string fixture(const std::string& name);
std::string sourceDir();

// A fresh directory under /tmp, removed when the object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `text` to path()/name and returns the full path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

}  // namespace mtm::test
