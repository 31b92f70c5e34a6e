#pragma once
// YAML -> Config. Every problem is reported, one line each:
//   mtm.yaml:14: policy.hot_threshold: expected a number in [0, 1] or a percentage, got "9x"
// A failed load changes nothing: the caller keeps the config it had.

#include <string>
#include <string_view>
#include <vector>

#include "mtm/Result.h"
#include "mtm/config/Config.h"

namespace mtm::config {

// The largest config file read (a real one is a few KiB: /dev/zero is refused, not read).
inline constexpr size_t kMaxConfigBytes = 1 << 20;

// `sourceName` is what error lines start with (a file name). One YAML document; a key given
// twice at any level is an error naming both lines.
Result<Config> parseConfig(std::string_view yaml, const std::string& sourceName);
// A regular file only (a directory, FIFO or device is refused), at most kMaxConfigBytes.
Result<Config> loadConfigFile(const std::string& path);
// The file at `path`, or the embedded default when `path` is empty.
Result<Config> loadConfigOrDefault(const std::string& path);

// config/mtm.yaml as compiled into the program.
std::string_view defaultConfigText();
const Config& defaultConfig();

// The config as YAML, every key present.
std::string renderConfig(const Config& config);
// The same as JSON: {"source": ..., "config": {...}}; numbers and booleans typed, sizes, rates
// and fractions as the strings renderConfig writes.
std::string renderConfigJson(const Config& config);

// Every key path ("profiler.interval_ms", "tiers.list[].nodes"), for documentation checks.
std::vector<std::string> configKeys();

}  // namespace mtm::config
