#include "mtm/Result.h"

#include <cstring>

namespace mtm {

Error::Error(std::string message, int errnum, SourceLocation where) : message_(std::move(message)), errnum_(errnum), where_(where) {}

Error Error::fromErrno(std::string what, int errnum, SourceLocation where) {
  return Error(what + ": " + std::strerror(errnum), errnum, where);
}

Error& Error::context(const std::string& what) & {
  message_ += " -- while " + what;
  return *this;
}

Error&& Error::context(const std::string& what) && {
  context(what);
  return std::move(*this);
}

}  // namespace mtm
