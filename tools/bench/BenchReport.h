#pragma once
// Benchmark output in the style of nccl-tests: '#' header lines with a units row, one row per
// measurement, '#' footer lines with the verdict; the same rows written as JSON.

#include <string>
#include <vector>

#include "mtm/Json.h"

namespace mtm::bench {

struct BenchColumn {
  std::string name;  // "rate"
  std::string unit;  // "MiB/s"; "" for none
  int width = 10;
  int precision = 1;  // digits after the point for numbers; -1 for text
};

class BenchReport {
 public:
  BenchReport(std::string title, std::vector<BenchColumn> columns);
  void note(const std::string& line);  // a '#' line under the title
  // Prints the header once, then the row; numbers and text by the column's precision.
  void row(const std::vector<std::string>& text, const std::vector<double>& numbers);
  // '#' lines after the table, and the verdict: "# verdict: PASS -- <why>".
  void footer(const std::string& line);
  void verdict(bool pass, const std::string& why);
  bool passed() const { return pass_; }
  // Writes {"title", "notes", "rows": [{column: value}], "footer", "verdict"} to `path`.
  bool writeJson(const std::string& path) const;

 private:
  void printHeader();
  std::string title_;
  std::vector<BenchColumn> columns_;
  std::vector<std::string> notes_, footer_;
  std::vector<std::pair<std::vector<std::string>, std::vector<double>>> rows_;
  bool headerDone_ = false;
  bool pass_ = true;
  std::string verdict_;
};

}  // namespace mtm::bench
