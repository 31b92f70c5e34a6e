#pragma once
// Pure parsers for the text formats of the kernel and of the command line. No I/O here.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mtm/Result.h"

namespace mtm {

std::string_view trim(std::string_view s);

// The offset of the first byte that is not printable text: a control character (tab aside), DEL,
// or a byte that is not part of well-formed UTF-8 (overlong forms and surrogates included);
// nullopt when there is none.
std::optional<size_t> firstNonText(std::string_view s);

// Unsigned, decimal or in `base` (16: hex, no 0x); the whole (trimmed) text must be the number.
Result<uint64_t> parseUnsigned(std::string_view text, int base = 10);

// Node and CPU lists in the kernel's and numactl's grammar: "0,2-3", "" (empty). Sorted, unique.
Result<std::vector<int>> parseNodeList(std::string_view text);
std::string formatNodeList(const std::vector<int>& nodes);

// Sizes: "4096", "512KiB", "2M", "1.5GiB". Every suffix is a power of 1024 (K, KB, KiB alike).
Result<uint64_t> parseSize(std::string_view text);
// Rates: a size per second, "512MiB/s".
Result<uint64_t> parseRate(std::string_view text);
// Percentages: "5%" -> 0.05, within [0, 100]%.
Result<double> parsePercent(std::string_view text);

// "512.0 MiB", "3.2 GiB", "4096 B".
std::string formatBytes(uint64_t bytes);

// /sys/devices/system/node/nodeN/meminfo: "Node 0 MemTotal:  514356 kB" -> {"MemTotal": bytes}.
Result<std::map<std::string, uint64_t>> parseNodeMeminfo(std::string_view text);

// Whitespace-separated integers: /sys/devices/system/node/nodeN/distance.
Result<std::vector<int>> parseIntRow(std::string_view text);

// sysfs multiple-choice files: "always [madvise] never" -> "madvise".
Result<std::string> parseBracketChoice(std::string_view text);

}  // namespace mtm
