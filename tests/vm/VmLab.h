#pragma once
// Runs a command in the VM lab (tools/vmlab) with this build's binaries.

#include <string>
#include <vector>

#include "Run.h"

namespace mtm::test {

inline RunResult vmlab(std::vector<std::string> args) {
  std::vector<std::string> argv{sourceDir() + "/tools/vmlab", "--build", MTM_BIN_DIR "/.."};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// The guest script's "FAIL: why" line, or "" when there is none: checked first, so that a
// failure's reason leads the report even when a long log that follows it is cut.
inline std::string failReason(const std::string& out) {
  const size_t at = out.rfind("FAIL: ");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

}  // namespace mtm::test
