#pragma once
// A small streaming JSON writer: commas, escaping and nesting are its business.
//   JsonWriter w; w.beginObject(); w.key("tiers"); w.beginArray(); ... w.endArray(); w.endObject();

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtm {

class JsonWriter {
 public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  JsonWriter& beginArray();
  JsonWriter& endArray();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<uint64_t>(v)); }
  JsonWriter& value(double v);
  JsonWriter& value(bool v);
  JsonWriter& null();
  JsonWriter& value(const std::vector<int>& list);

  // The document, with a trailing newline.
  std::string str() const { return out_ + "\n"; }

 private:
  void separate();
  std::string out_;
  std::vector<bool> first_{true};  // per nesting level: nothing written yet
  bool afterKey_ = false;
};

std::string jsonEscape(std::string_view s);

}  // namespace mtm
