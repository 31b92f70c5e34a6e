// Fuzz target: the config loader on any bytes, as `mtmctl config check FILE` and a SIGHUP read
// them. Nothing may crash, hang or throw out of parseConfig; and a config it accepts must render
// (renderConfig, what `mtmctl config show` prints) to YAML that it accepts again and that renders
// the same: the loader and the renderer agree on every key.
//
// Built with libFuzzer by tools/fuzz (clang: -fsanitize=fuzzer,address,undefined); built without
// it, tests/fuzz/FuzzReplay.cpp replays the committed corpus (tests/fuzz/corpus/config).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "mtm/config/ConfigLoader.h"

namespace {

[[noreturn]] void broken(const char* what, const std::string& detail) {
  std::fprintf(stderr, "config fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > mtm::config::kMaxConfigBytes) return 0;  // loadConfigFile refuses these unread
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  auto config = mtm::config::parseConfig(yaml, "fuzz.yaml");
  if (!config) {
    if (config.error().message().empty()) broken("an error without a message", std::string(yaml));
    return 0;
  }
  const std::string shown = mtm::config::renderConfig(*config);
  auto again = mtm::config::parseConfig(shown, "rendered.yaml");
  if (!again) broken("a rendered config does not load again", shown + "\n--> " + again.error().message());
  if (mtm::config::renderConfig(*again) != shown) broken("a rendered config renders differently after loading", shown);
  return 0;
}
