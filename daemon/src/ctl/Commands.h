#pragma once
// mtmctl's subcommands. Each add*() registers its subcommand(s) with their options and says
// what to run when one is chosen.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "mtm/Result.h"
#include "mtm/config/Config.h"
#include "mtm/daemon/Machine.h"

namespace mtm::daemon::ctl {

struct Global {
  std::string configPath;
  std::string kernelRoot = "/";
  int verbosity = 0;  // -v: info, -vv: debug (logs to stderr)
};

struct Command {
  CLI::App* app;
  std::function<int()> run;
};

using Commands = std::vector<Command>;

void addTiersCommand(CLI::App& parent, const Global& global, Commands& out);
void addConfigCommands(CLI::App& parent, const Global& global, Commands& out);
void addMigrateCommand(CLI::App& parent, const Global& global, Commands& out);
void addPlacementCommands(CLI::App& parent, const Global& global, Commands& out);
void addProfileCommands(CLI::App& parent, const Global& global, Commands& out);
void addDaemonCommands(CLI::App& parent, const Global& global, Commands& out);
void addRunCommand(CLI::App& parent, const Global& global, Commands& out);

// Accepts out.svg and out.png only (a usage error otherwise).
CLI::Validator heatmapFileValidator();
// A decimal number in [min, max], else "expected WHAT (a whole number from MIN to MAX), got ...".
CLI::Validator wholeNumberValidator(uint64_t min, uint64_t max, const std::string& what);
// The kernel's largest possible pid (PID_MAX_LIMIT on 64-bit).
inline constexpr uint64_t kPidMaxLimit = 4194304;
CLI::Validator pidValidator();
// Draws a recording as out.svg or out.png; the line to print on success.
Result<std::string> writeHeatmap(const std::string& recording, const std::string& output, int pid, size_t rows);

// The config named by --config, or the embedded default.
Result<config::Config> effectiveConfig(const Global& global);
// Config plus the machine it describes.
Result<Machine> effectiveMachine(const Global& global, config::Config& cfg);

// "mtmctl: <message>" on stderr; returns 1. When the command was asked for JSON, also
// {"error": "<message>"} on stdout, so that a script reading stdout gets an object either way.
int fail(const std::string& message);
void setJsonErrors(bool json);

}  // namespace mtm::daemon::ctl
