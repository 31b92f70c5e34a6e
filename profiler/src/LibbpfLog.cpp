// libbpf's messages into mtm's logger, set up when the program starts (this OBJECT library is
// linked whole into every program that loads BPF).
#include <bpf/libbpf.h>

#include "mtm/Log.h"

namespace {

int libbpfPrint(enum libbpf_print_level level, const char* fmt, va_list args) {
  std::string text = mtm::log::formatCMessage(fmt, args);
  if (text.rfind("libbpf: ", 0) == 0) text.erase(0, 8);  // most of its messages name it already
  switch (level) {
    case LIBBPF_WARN:
      mtm::log::get().warn("libbpf: {}", text);
      break;
    case LIBBPF_INFO:
      mtm::log::get().info("libbpf: {}", text);
      break;
    case LIBBPF_DEBUG:
      mtm::log::get().debug("libbpf: {}", text);
      break;
  }
  return 0;
}

const bool kRouted = (libbpf_set_print(libbpfPrint), true);

}  // namespace
