#include "mtm/profiler/Recording.h"

#include <time.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <fstream>
#include <memory>

#include "mtm/Json.h"

namespace mtm::profiler {

Result<std::unique_ptr<Recorder>> Recorder::create(const std::string& path, uint32_t intervalMs, const std::vector<std::string>& sources) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return Error::fromErrno("create " + path, errno);
  std::unique_ptr<Recorder> r(new Recorder(f, path));
  JsonWriter w;
  w.beginObject().key("mtm_profile").value(1).key("interval_ms").value(intervalMs).key("sources").beginArray();
  for (const auto& s : sources) w.value(s);
  w.endArray().endObject();
  std::fputs(w.str().c_str(), f);
  return r;
}

Recorder::~Recorder() {
  if (file_) std::fclose(file_);
}

Status Recorder::write(const Snapshot& s, const IntervalEvents& events) {
  JsonWriter w;
  w.beginObject();
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  w.key("interval").value(s.interval).key("seconds").value(s.seconds);
  w.key("monotonic_s").value(double(now.tv_sec) + double(now.tv_nsec) / 1e9);
  w.key("checks").value(s.checks).key("cpu_ns").value(s.cpuNs);
  w.key("exited").value(s.exited);
  w.key("regions").beginArray();
  for (const auto& r : s.regions) {
    w.beginArray().value(r.pid).value(r.start).value(r.end).value(r.hotness).value(r.node).value(r.huge).value(r.tier).endArray();
  }
  w.endArray();
  w.key("promoted_pages").value(events.promotedPages).key("demoted_pages").value(events.demotedPages);
  w.key("events").beginArray();
  for (const auto& e : events.events) w.value(e);
  w.endArray().endObject();
  if (std::fputs(w.str().c_str(), file_) < 0 || std::fflush(file_) != 0) return Error::fromErrno("write " + path_, errno);
  return {};
}

Result<Recording> readRecording(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error::fromErrno(path + ": cannot read profile", errno);
  Recording rec;
  std::string line;
  size_t lineNo = 0;
  try {
    while (std::getline(in, line)) {
      ++lineNo;
      if (line.empty()) continue;
      YAML::Node n = YAML::Load(line);
      if (lineNo == 1) {
        if (!n["mtm_profile"]) return Error(path + ":1: not an mtm profile (no \"mtm_profile\" header)");
        rec.intervalMs = n["interval_ms"].as<uint32_t>();
        for (const auto& s : n["sources"]) rec.sources.push_back(s.as<std::string>());
        continue;
      }
      Snapshot s;
      s.interval = n["interval"].as<uint64_t>();
      s.seconds = n["seconds"].as<double>();
      s.checks = n["checks"].as<uint64_t>();
      s.cpuNs = n["cpu_ns"].as<uint64_t>();
      for (const auto& e : n["exited"]) s.exited.push_back(e.as<int>());
      for (const auto& r : n["regions"]) {
        RegionInfo info;
        info.pid = r[0].as<int>();
        info.start = r[1].as<uint64_t>();
        info.end = r[2].as<uint64_t>();
        info.hotness = r[3].as<double>();
        info.node = r[4].as<int>();
        info.huge = r[5].as<bool>();
        if (r.size() > 6) info.tier = r[6].as<int>();
        s.regions.push_back(info);
      }
      rec.monotonic.push_back(n["monotonic_s"] ? n["monotonic_s"].as<double>() : 0.0);
      IntervalEvents ev;
      if (n["promoted_pages"]) ev.promotedPages = n["promoted_pages"].as<uint64_t>();
      if (n["demoted_pages"]) ev.demotedPages = n["demoted_pages"].as<uint64_t>();
      for (const auto& e : n["events"]) ev.events.push_back(e.as<std::string>());
      for (int pid : s.exited) ev.events.push_back("pid " + std::to_string(pid) + " exited");
      rec.events.push_back(std::move(ev));
      rec.intervals.push_back(std::move(s));
    }
  } catch (const YAML::Exception& e) {
    return Error(path + ":" + std::to_string(lineNo) + ": malformed profile line: " + e.what());
  }
  if (lineNo == 0) return Error(path + ": empty profile");
  return rec;
}

}  // namespace mtm::profiler
