#include "mtm/config/ZoneReserve.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <string>

namespace mtm::config {
namespace {

// One zone's block: "Node N, zone NAME" up to the next such line.
struct Zone {
  int node = -1;
  uint64_t managed = 0, low = 0, boost = 0, protection = 0;
  uint64_t reservePages() const { return managed == 0 ? 0 : low + boost + protection; }
};

// The largest number in "protection: (0, 191, 191, 191, 191)".
uint64_t largestProtection(const std::string& line) {
  uint64_t most = 0;
  std::string numbers = line.substr(line.find('(') + 1);
  std::replace(numbers.begin(), numbers.end(), ',', ' ');
  std::istringstream in(numbers);
  uint64_t v = 0;
  while (in >> v) most = std::max(most, v);
  return most;
}

}  // namespace

std::map<int, uint64_t> parseZoneReserves(std::string_view zoneinfo, uint64_t pageBytes) {
  std::map<int, uint64_t> out;
  Zone zone;
  auto close = [&] {
    if (zone.node >= 0) out[zone.node] += zone.reservePages() * pageBytes;
    zone = Zone{};
  };
  std::istringstream in{std::string(zoneinfo)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "Node") {
      close();
      words >> zone.node;  // "0," reads as 0
    } else if (key == "protection:" && line.find('(') != std::string::npos) {
      zone.protection = largestProtection(line);
    } else if (key == "managed" || key == "low" || key == "boost") {
      uint64_t v = 0;
      if (!(words >> v)) continue;
      (key == "managed" ? zone.managed : key == "low" ? zone.low : zone.boost) = v;
    }
  }
  close();
  return out;
}

Result<std::map<int, uint64_t>> readZoneReserves(const KernelFs& fs) {
  auto text = fs.read("/proc/zoneinfo");
  if (!text) return std::move(text).takeError();
  return parseZoneReserves(*text, static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
}

}  // namespace mtm::config
