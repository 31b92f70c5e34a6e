#include "DaemonClient.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cxlccl {
namespace {

constexpr int kMaxFds = 16;
constexpr int kTimeoutSeconds = 10;

void closeAll(std::vector<int>* fds) {
  for (int fd : *fds) ::close(fd);
  fds->clear();
}

}  // namespace

std::string daemonSocketOf(const std::string& spec) {
  if (spec == "mtmd") return kDefaultDaemonSocket;
  if (spec.rfind("mtmd:", 0) == 0) return spec.substr(5);
  return "";
}

Status daemonRequest(const std::string& socket, const std::string& line, std::string* body, std::vector<int>* fds) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket.empty() || socket.size() >= sizeof addr.sun_path)
    return Status::error(cxlcclInvalidArgument, "mtmd socket \"", socket, "\" is not a socket path");
  std::memcpy(addr.sun_path, socket.c_str(), socket.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::system("socket(AF_UNIX)", errno);
  timeval tv{kTimeoutSeconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    ::close(fd);
    return Status::system(cat("reach mtmd at ", socket,
                              " for its CXL pool (is mtmd running, with "
                              "daemon.cxl_pool set?)"),
                          err);
  }
  std::string request = line + "\n";
  std::string reply;
  std::vector<int> received;
  bool sent = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  if (sent) ::shutdown(fd, SHUT_WR);
  while (sent) {
    char data[4096];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    iovec iov{data, sizeof data};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int passed = -1;
        std::memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof passed);
        received.push_back(passed);
      }
    }
    reply.append(data, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (reply.rfind("ok\n", 0) == 0) {
    *body = reply.substr(3);
    if (fds != nullptr)
      *fds = std::move(received);
    else
      closeAll(&received);
    return Status::success();
  }
  closeAll(&received);
  while (!reply.empty() && reply.back() == '\n') reply.pop_back();
  if (reply.rfind("error ", 0) == 0) return Status::error(cxlcclSystemError, "mtmd at ", socket, ": ", reply.substr(6));
  return Status::error(cxlcclSystemError, "mtmd at ", socket, " gave no answer to \"", line, "\" within ", kTimeoutSeconds, " s");
}

}  // namespace cxlccl
