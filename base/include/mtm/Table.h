#pragma once
// One table definition, three renderings: aligned text for people, JSON and CSV for programs.
// Text shows byte columns in the unit of their header ("capacity[MiB]"); JSON and CSV carry the
// raw value under the column's key ("capacity_bytes").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "mtm/Json.h"
#include "mtm/Result.h"

namespace mtm {

enum class Format { Text, Json, Csv };
Result<Format> parseFormat(std::string_view name);

// Plain integers, shown space-separated ("10 20 30"); a std::vector<int> cell is a node list
// ("0,2-3"). Both are JSON arrays.
struct IntList {
  std::vector<int> values;
};

// A missing value (std::monostate) prints as "-" in text, null in JSON and empty in CSV.
using Cell = std::variant<std::monostate, int64_t, uint64_t, double, std::string, std::vector<int>, IntList>;

struct Column {
  std::string key;           // JSON / CSV name, with its unit: "capacity_bytes"
  std::string header;        // text header, with its unit: "capacity[MiB]"
  uint64_t textDivisor = 1;  // text shows value / divisor (1 << 20 for MiB)
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void addRow(std::vector<Cell> row);
  size_t rowCount() const { return rows_.size(); }

  std::string renderText() const;
  std::string renderCsv() const;
  void writeJson(JsonWriter& w) const;  // an array of objects
  std::string render(Format format) const;

 private:
  std::string textCell(const Cell& cell, const Column& column) const;
  std::vector<Column> columns_;
  std::vector<std::vector<Cell>> rows_;
};

}  // namespace mtm
