#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "mtm/Json.h"
#include "mtm/Parse.h"
#include "mtm/config/ConfigLoader.h"

namespace mtm::config {
namespace {

// A YAML scalar as JSON: whole and decimal numbers and booleans as such, the rest as strings
// ("2%", "512MiB/s", "0,2-3").
void writeScalar(JsonWriter& w, const std::string& text) {
  if (text == "true" || text == "false") {
    w.value(text == "true");
    return;
  }
  if (auto whole = parseUnsigned(text)) {
    w.value(uint64_t{*whole});
    return;
  }
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size() && text.find_first_not_of("0123456789.-") == std::string::npos) {
    w.value(number);
    return;
  }
  w.value(text);
}

void write(JsonWriter& w, const YAML::Node& node) {
  if (node.IsMap()) {
    w.beginObject();
    for (const auto& kv : node) {
      w.key(kv.first.as<std::string>());
      write(w, kv.second);
    }
    w.endObject();
  } else if (node.IsSequence()) {
    w.beginArray();
    for (const auto& item : node) write(w, item);
    w.endArray();
  } else if (node.IsNull()) {
    w.null();
  } else {
    writeScalar(w, node.Scalar());
  }
}

}  // namespace

std::string renderConfigJson(const Config& config) {
  JsonWriter w;
  w.beginObject().key("source").value(config.source).key("config");
  write(w, YAML::Load(renderConfig(config)));
  w.endObject();
  return w.str();
}

}  // namespace mtm::config
