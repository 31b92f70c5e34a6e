#pragma once
// Shared command-line conventions of mtmd and mtmctl: a bad argument prints one line on
// stderr and exits 2; --help and --version exit 0.

#include <string>

#include <CLI/CLI.hpp>

namespace mtm::daemon {

inline constexpr int kExitUsage = 2;

// Parses argv; returns -1 to go on, or the exit code the program should end with.
int parseCommandLine(CLI::App& app, int argc, char** argv);

// Prints "<program>: <message>" on stderr; returns 1 for the caller to exit with.
int fail(const std::string& program, const std::string& message);

}  // namespace mtm::daemon
