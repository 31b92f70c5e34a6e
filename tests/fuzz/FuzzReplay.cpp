// A fuzz target built without libFuzzer (ctest: "fuzz: ... corpus") replays every file named, or
// every file in a directory named, through LLVMFuzzerTestOneInput. A target aborts on a broken
// property, so a replay that returns has found none. The main() here is weak: a target with
// options of its own (PoolFuzz.cpp) defines main() and calls replayFuzzInputs itself.

#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "FuzzReplay.h"

int replayFuzzInputs(int argc, char** argv) {
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<std::string> files;
    if (DIR* d = opendir(argv[i])) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') files.push_back(std::string(argv[i]) + "/" + e->d_name);
      closedir(d);
    } else {
      files.push_back(argv[i]);
    }
    for (const std::string& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++inputs;
    }
  }
  std::printf("replayed %d inputs, no crash\n", inputs);
  return inputs > 0 ? 0 : 1;
}

__attribute__((weak)) int main(int argc, char** argv) { return replayFuzzInputs(argc, argv); }
