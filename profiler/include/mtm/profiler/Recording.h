#pragma once
// Profiles on disk: JSON lines, one header, then one line per interval.
//   {"mtm_profile":1,"interval_ms":1000,"sources":["ebpf_abit"]}
//   {"interval":0,"seconds":1.00,"monotonic_s":5123.4,"checks":5000,"cpu_ns":2100000,"exited":[],
//    "regions":[[pid,start,end,hotness,node,huge,tier],...],
//    "promoted_pages":0,"demoted_pages":0,"events":["..."]}
// The last three, and a region's tier, are there when the writer knew them (mtmctl run does;
// older recordings lack them).

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "mtm/Result.h"
#include "mtm/profiler/Snapshot.h"

namespace mtm::profiler {

// What a manager did in an interval, beside what the profiler saw.
struct IntervalEvents {
  uint64_t promotedPages = 0;  // 4 KiB pages moved up, down
  uint64_t demotedPages = 0;
  std::vector<std::string> events;  // "pid 42 exited", ...
};

struct Recording {
  uint32_t intervalMs = 0;
  std::vector<std::string> sources;
  std::vector<Snapshot> intervals;
  // Per interval: CLOCK_MONOTONIC seconds when it was written, to line it up with other clocks
  // on the machine (0 in recordings that predate it).
  std::vector<double> monotonic;
  std::vector<IntervalEvents> events;  // per interval
};

class Recorder {
 public:
  static Result<std::unique_ptr<Recorder>> create(const std::string& path, uint32_t intervalMs, const std::vector<std::string>& sources);
  ~Recorder();
  Status write(const Snapshot& snapshot, const IntervalEvents& events = {});

 private:
  explicit Recorder(FILE* f, std::string path) : file_(f), path_(std::move(path)) {}
  FILE* file_;
  std::string path_;
};

// Reads a recording; errors name the file and line.
Result<Recording> readRecording(const std::string& path);

}  // namespace mtm::profiler
