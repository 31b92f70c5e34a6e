#pragma once

#include <string>

namespace mtm::daemon {

// Every registry and its entries, one per line: what `mtmd --list-plugins` prints.
std::string listPlugins();

}  // namespace mtm::daemon
