#pragma once
// One registry per plugin interface. Implementations register themselves by name from their
// own .cpp (link those libraries whole); config names pick them:
//
//   namespace { const bool kRegistered = Registry<Policy>::add("none", "first touch", factory); }

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mtm/Result.h"

namespace mtm {

// Interface must have `static constexpr std::string_view kRole` ("policy", "mover", ...) and a
// `Context` type: what its factories are given to build an implementation.
template <class Interface>
class Registry {
 public:
  using Context = typename Interface::Context;
  using Factory = std::function<std::unique_ptr<Interface>(const Context&)>;
  struct Entry {
    std::string name;
    std::string description;
    Factory make;
  };

  static bool add(std::string name, std::string description, Factory make) {
    MTM_CHECK(find(name) == nullptr);
    entries().push_back({std::move(name), std::move(description), std::move(make)});
    std::sort(entries().begin(), entries().end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    return true;
  }

  static Result<std::unique_ptr<Interface>> create(std::string_view name, const Context& context) {
    if (const Entry* e = find(name)) return e->make(context);
    std::string known;
    for (const auto& e : entries()) known += (known.empty() ? "" : ", ") + e.name;
    return Error("unknown " + std::string(Interface::kRole) + " \"" + std::string(name) + "\" (known: " + known + ")");
  }

  static const Entry* find(std::string_view name) {
    for (const auto& e : entries())
      if (e.name == name) return &e;
    return nullptr;
  }

  static std::vector<Entry>& entries() {
    static std::vector<Entry> list;
    return list;
  }
};

}  // namespace mtm
