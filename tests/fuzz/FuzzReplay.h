#pragma once
// Replaying a fuzz target's inputs without libFuzzer (FuzzReplay.cpp).

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Runs every file in argv[1..] (a file, or a directory of files) through the target; prints how
// many. Returns 1 when there were none.
int replayFuzzInputs(int argc, char** argv);
