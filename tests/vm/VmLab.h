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

}  // namespace mtm::test
