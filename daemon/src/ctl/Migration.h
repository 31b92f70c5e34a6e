#pragma once
// What mtmctl's migration commands share: address ranges from the command line.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "mtm/Result.h"
#include "mtm/migrate/LiveKernel.h"

namespace mtm::daemon::ctl {

using migrate::LiveKernel;

// "0x7f00-0x7f10" strings into ranges; the first bad one is the error.
Result<std::vector<AddressRange>> parseRanges(const std::vector<std::string>& texts);

// Command-line checks, so that a malformed value is a usage error (exit 2).
CLI::Validator addressRangeValidator();
CLI::Validator rateValidator();

}  // namespace mtm::daemon::ctl
