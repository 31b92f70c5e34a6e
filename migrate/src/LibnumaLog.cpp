// libnuma's messages into mtm's logger. libnuma reports through weak hooks that a program-wide
// definition replaces (numa(3): "numa_error ... and numa_warn ... can be overridden"); this
// OBJECT library is linked whole into every program that moves pages.
#include <cerrno>
#include <cstdarg>
#include <cstring>

#include "mtm/Log.h"

extern "C" void numa_error(char* where) { mtm::log::get().error("libnuma: {}: {}", where, std::strerror(errno)); }

extern "C" void numa_warn(int number, char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string text = mtm::log::formatCMessage(fmt, args);
  va_end(args);
  mtm::log::get().warn("libnuma: {} (warning {})", text, number);
}
