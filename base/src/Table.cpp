#include "mtm/Table.h"

#include <algorithm>
#include <cstdio>

#include "mtm/Parse.h"

namespace mtm {

Result<Format> parseFormat(std::string_view name) {
  if (name == "text") return Format::Text;
  if (name == "json") return Format::Json;
  if (name == "csv") return Format::Csv;
  return Error("expected a format text|json|csv, got \"" + std::string(name) + "\"");
}

void Table::addRow(std::vector<Cell> row) {
  MTM_CHECK(row.size() == columns_.size());
  rows_.push_back(std::move(row));
}

std::string Table::textCell(const Cell& cell, const Column& column) const {
  struct Visitor {
    uint64_t divisor;
    std::string operator()(std::monostate) const { return "-"; }
    std::string operator()(int64_t v) const { return divisor == 1 ? std::to_string(v) : (*this)(static_cast<double>(v)); }
    std::string operator()(uint64_t v) const { return divisor == 1 ? std::to_string(v) : (*this)(static_cast<double>(v)); }
    std::string operator()(double v) const {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.1f", v / static_cast<double>(divisor));
      return buf;
    }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(const std::vector<int>& v) const { return v.empty() ? "-" : formatNodeList(v); }
    std::string operator()(const IntList& list) const {
      std::string s;
      for (int v : list.values) s += (s.empty() ? "" : " ") + std::to_string(v);
      return s.empty() ? "-" : s;
    }
  };
  return std::visit(Visitor{column.textDivisor}, cell);
}

std::string Table::renderText() const {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].header.size();
  for (const auto& row : rows_) {
    auto& out = cells.emplace_back();
    for (size_t c = 0; c < row.size(); ++c) {
      out.push_back(textCell(row[c], columns_[c]));
      width[c] = std::max(width[c], out.back().size());
    }
  }
  auto line = [&](auto cellAt) {
    std::string s;
    for (size_t c = 0; c < columns_.size(); ++c) {
      std::string v = cellAt(c);
      if (c + 1 < columns_.size()) v.resize(width[c], ' ');
      s += v + (c + 1 < columns_.size() ? "  " : "");
    }
    return s + "\n";
  };
  std::string out = line([&](size_t c) { return columns_[c].header; });
  for (const auto& row : cells) out += line([&](size_t c) { return row[c]; });
  return out;
}

std::string Table::renderCsv() const {
  auto quote = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string out;
  for (size_t c = 0; c < columns_.size(); ++c) out += (c ? "," : "") + columns_[c].key;
  out += "\n";
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) out += ",";
      if (std::holds_alternative<std::monostate>(row[c])) continue;
      Column raw = columns_[c];
      raw.textDivisor = 1;
      std::string v = std::holds_alternative<double>(row[c]) ? std::to_string(std::get<double>(row[c])) : textCell(row[c], raw);
      out += quote(v);
    }
    out += "\n";
  }
  return out;
}

void Table::writeJson(JsonWriter& w) const {
  w.beginArray();
  for (const auto& row : rows_) {
    w.beginObject();
    for (size_t c = 0; c < row.size(); ++c) {
      w.key(columns_[c].key);
      std::visit(
          [&w](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>)
              w.null();
            else if constexpr (std::is_same_v<T, IntList>)
              w.value(v.values);
            else
              w.value(v);
          },
          row[c]);
    }
    w.endObject();
  }
  w.endArray();
}

std::string Table::render(Format format) const {
  switch (format) {
    case Format::Text:
      return renderText();
    case Format::Csv:
      return renderCsv();
    case Format::Json: {
      JsonWriter w;
      writeJson(w);
      return w.str();
    }
  }
  return {};
}

}  // namespace mtm
