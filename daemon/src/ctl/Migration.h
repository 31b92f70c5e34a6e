#pragma once
// What mtmctl's migration commands share: the live kernel, address ranges from the command line.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "mtm/KernelFs.h"
#include "mtm/migrate/Clock.h"
#include "mtm/migrate/HugePages.h"
#include "mtm/migrate/Mover.h"
#include "mtm/migrate/Syscalls.h"

namespace mtm::daemon::ctl {

// The real kernel, as the mover's dependencies.
struct LiveKernel {
  migrate::KernelSyscalls sys;
  migrate::KernelHugePageFinder huge;
  KernelFs fs{"/"};
  migrate::SteadyClock clock;
  migrate::MoverDeps deps() { return {sys, huge, fs, clock}; }
};

// "0x7f00-0x7f10" strings into ranges; the first bad one is the error.
Result<std::vector<migrate::AddressRange>> parseRanges(const std::vector<std::string>& texts);

// Command-line checks, so that a malformed value is a usage error (exit 2).
CLI::Validator addressRangeValidator();
CLI::Validator rateValidator();

}  // namespace mtm::daemon::ctl
