#include "BenchReport.h"

#include <cstdio>
#include <fstream>

#include "mtm/Check.h"

namespace mtm::bench {

BenchReport::BenchReport(std::string title, std::vector<BenchColumn> columns) : title_(std::move(title)), columns_(std::move(columns)) {
  std::printf("# %s\n", title_.c_str());
}

void BenchReport::note(const std::string& line) {
  notes_.push_back(line);
  std::printf("# %s\n", line.c_str());
}

void BenchReport::printHeader() {
  std::string names = "#", units = "#";
  for (const auto& c : columns_) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %*s", c.width, c.name.c_str());
    names += buf;
    std::snprintf(buf, sizeof buf, " %*s", c.width, c.unit.empty() ? "" : ("(" + c.unit + ")").c_str());
    units += buf;
  }
  std::printf("%s\n%s\n", names.c_str(), units.c_str());
  headerDone_ = true;
}

void BenchReport::row(const std::vector<std::string>& text, const std::vector<double>& numbers) {
  if (!headerDone_) printHeader();
  MTM_CHECK(text.size() + numbers.size() == columns_.size());
  std::string line = " ";
  size_t t = 0, n = 0;
  for (const auto& c : columns_) {
    char buf[64];
    if (c.precision < 0)
      std::snprintf(buf, sizeof buf, " %*s", c.width, text[t++].c_str());
    else
      std::snprintf(buf, sizeof buf, " %*.*f", c.width, c.precision, numbers[n++]);
    line += buf;
  }
  rows_.push_back({text, numbers});
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void BenchReport::footer(const std::string& line) {
  footer_.push_back(line);
  std::printf("# %s\n", line.c_str());
}

void BenchReport::verdict(bool pass, const std::string& why) {
  pass_ = pass;
  verdict_ = std::string(pass ? "PASS" : "FAIL") + " -- " + why;
  std::printf("# verdict: %s\n", verdict_.c_str());
}

bool BenchReport::writeJson(const std::string& path) const {
  JsonWriter w;
  w.beginObject();
  w.key("title").value(title_);
  w.key("notes").beginArray();
  for (const auto& n : notes_) w.value(n);
  w.endArray();
  w.key("rows").beginArray();
  for (const auto& [text, numbers] : rows_) {
    w.beginObject();
    size_t t = 0, n = 0;
    for (const auto& c : columns_) {
      w.key(c.unit.empty() ? c.name : c.name + "[" + c.unit + "]");
      if (c.precision < 0)
        w.value(text[t++]);
      else
        w.value(numbers[n++]);
    }
    w.endObject();
  }
  w.endArray();
  w.key("footer").beginArray();
  for (const auto& f : footer_) w.value(f);
  w.endArray();
  w.key("verdict").value(verdict_);
  w.endObject();
  std::ofstream out(path);
  out << w.str();
  return static_cast<bool>(out);
}

}  // namespace mtm::bench
