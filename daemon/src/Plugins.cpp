#include "mtm/daemon/Plugins.h"

#include "mtm/Registry.h"
#include "mtm/migrate/Mover.h"
#include "mtm/policy/Policy.h"
#include "mtm/profiler/Source.h"

namespace mtm::daemon {
namespace {

template <class Interface>
std::string section(const char* title) {
  std::string out = std::string(title) + ":\n";
  for (const auto& e : Registry<Interface>::entries()) {
    std::string name = e.name;
    name.resize(std::max<size_t>(name.size(), 14), ' ');
    out += "  " + name + "  " + e.description + "\n";
  }
  return out;
}

}  // namespace

std::string listPlugins() {
  return section<profiler::Source>("profiler sources") + section<policy::Policy>("policies") + section<migrate::Mover>("movers");
}

}  // namespace mtm::daemon
