#include "mtm/daemon/ControlSocket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "mtm/Log.h"

namespace mtm::daemon {
namespace {

Result<sockaddr_un> socketAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return Error("socket path \"" + path + "\" must be 1 to " + std::to_string(sizeof addr.sun_path - 1) + " bytes");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

void setTimeout(int fd, int option, std::chrono::milliseconds t) {
  timeval tv{static_cast<time_t>(t.count() / 1000), static_cast<suseconds_t>(t.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv);
}

bool sendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The reply's first bytes carry the descriptors; the rest follows as usual.
bool sendWithFds(int fd, const std::string& data, const std::vector<int>& fds) {
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()), 0);
  iovec iov{const_cast<char*>(data.data()), data.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  ssize_t n = -1;
  do {
    n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  return sendAll(fd, data.substr(static_cast<size_t>(n)));
}

}  // namespace

Result<UniqueFd> listenUnix(const std::string& path, mode_t mode, const std::string& setting) {
  auto addr = socketAddress(path);
  if (!addr) return std::move(addr).takeError();
  const auto dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Error("cannot create " + dir.string() + ": " + ec.message() + " (set " + setting + " to a writable place)");
    ::chmod(dir.c_str(), 0755);
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return Error::fromErrno("socket(AF_UNIX)", errno);
  ::unlink(path.c_str());
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) return Error::fromErrno("bind " + path, errno);
  ::chmod(path.c_str(), mode);
  // SOMAXCONN: a flood of connections must not leave root's waiting outside.
  if (::listen(fd.get(), SOMAXCONN) != 0) return Error::fromErrno("listen " + path, errno);
  return fd;
}

Result<ControlServer> ControlServer::open(const std::string& path, Handler handler) {
  // Anyone may ask; SO_PEERCRED decides what they may do.
  auto fd = listenUnix(path, 0666, "daemon.socket");
  if (!fd) return std::move(fd).takeError();
  return ControlServer(std::move(*fd), path, std::move(handler));
}

ControlServer::ControlServer(ControlServer&& other) noexcept
    : fd_(std::move(other.fd_)), path_(std::move(other.path_)), handler_(std::move(other.handler_)), clients_(std::move(other.clients_)) {
  other.clients_.clear();
}

ControlServer::~ControlServer() {
  if (fd_) ::unlink(path_.c_str());
}

std::vector<pollfd> ControlServer::pollFds() const {
  std::vector<pollfd> fds{{fd_.get(), POLLIN, 0}};
  for (const auto& [fd, c] : clients_) fds.push_back({fd, POLLIN, 0});
  return fds;
}

void ControlServer::onReady(const std::vector<pollfd>& ready) {
  bool listening = false;
  for (const auto& p : ready) {
    if (p.revents == 0) continue;
    if (p.fd == fd_.get())
      listening = true;
    else if (clients_.count(p.fd))
      read(p.fd);
  }
  // After the reads: the connections already taken are served before new ones are.
  if (listening) accept();
}

void ControlServer::accept() {
  for (size_t taken = 0; taken < kAcceptsPerRound; ++taken) {
    UniqueFd client(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!client) {
      if (errno != EAGAIN && errno != EINTR) MTM_WARN("control socket accept: {}", std::strerror(errno));
      return;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(client.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      MTM_WARN("control socket: SO_PEERCRED: {}", std::strerror(errno));
      continue;
    }
    const std::string busy = overShare(cred.uid);
    const int c = client.get();
    clients_[c] = Client{std::move(client), {cred.pid, cred.uid}, {}, std::chrono::steady_clock::now()};
    if (!busy.empty()) finish(c, Error("busy: " + busy + "; try again when they finish"));
  }
}

std::string ControlServer::overShare(uid_t uid) const {
  size_t mine = 0, users = 0;
  for (const auto& [fd, c] : clients_) {
    mine += c.peer.uid == uid;
    users += c.peer.uid != 0;
  }
  if (uid == 0) return mine >= kClientsOfRoot ? "root has " + std::to_string(mine) + " requests open at once, the most it may" : "";
  if (mine >= kClientsPerUser)
    return "uid " + std::to_string(uid) + " has " + std::to_string(mine) + " requests open at once, the most one user may";
  if (users >= kClientsOfUsers) return std::to_string(users) + " requests of users other than root are open at once, the most mtmd takes";
  return "";
}

void ControlServer::read(int fd) {
  auto& c = clients_.at(fd);
  char buf[1024];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;  // more later
    if (n > 0) {
      c.buffer.append(buf, static_cast<size_t>(n));
      auto nl = c.buffer.find('\n');
      if (nl == std::string::npos && c.buffer.size() <= kMaxRequest) continue;
      if (nl == std::string::npos || nl > kMaxRequest) {
        finish(fd, Error("request too long: at most " + std::to_string(kMaxRequest) + " bytes, ending in a newline"));
        return;
      }
      c.buffer.resize(nl);
    }
    // A full line, or the end of the stream (a request without a newline still counts).
    if (n < 0) {
      finish(fd, Error::fromErrno("reading the request", errno));
      return;
    }
    const Peer peer = c.peer;
    const std::string request = c.buffer;
    std::vector<int> passFds;
    Reply reply = handler_(request, peer, &passFds);
    finish(fd, reply, passFds);
    return;
  }
}

void ControlServer::finish(int fd, const Reply& reply, const std::vector<int>& passFds) {
  // Replies are small and the client is waiting for them: send with a short blocking timeout.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  setTimeout(fd, SO_SNDTIMEO, std::chrono::seconds(1));
  std::string text = reply ? "ok\n" + *reply : "error " + reply.error().message() + "\n";
  bool sent = reply && !passFds.empty() ? sendWithFds(fd, text, passFds) : sendAll(fd, text);
  if (!sent) MTM_DEBUG("control socket: client went away before its reply");
  clients_.erase(fd);
}

void ControlServer::expireClients() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<int> stale;
  for (const auto& [fd, c] : clients_)
    if (now - c.since > kClientTimeout) stale.push_back(fd);
  for (int fd : stale) finish(fd, Error("timed out waiting for a request line"));
}

Reply controlRequest(const std::string& socketPath, const std::string& request, std::chrono::milliseconds timeout) {
  auto addr = socketAddress(socketPath);
  if (!addr) return std::move(addr).takeError();
  UniqueFd connection(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int fd = connection.get();
  if (!connection) return Error::fromErrno("socket(AF_UNIX)", errno);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0)
    return Error::fromErrno("cannot reach mtmd at " + socketPath, errno);
  setTimeout(fd, SO_RCVTIMEO, timeout);
  setTimeout(fd, SO_SNDTIMEO, timeout);
  std::string reply;
  int err = 0;  // why the reply ended: 0 when mtmd closed the connection
  if (sendAll(fd, request + "\n")) {
    ::shutdown(fd, SHUT_WR);
    char buf[4096];
    for (;;) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) err = errno;
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
    }
  } else {
    err = errno;
  }
  connection.reset();
  if (reply.rfind("ok\n", 0) == 0) return reply.substr(3);
  if (reply.rfind("error ", 0) == 0) {
    while (!reply.empty() && reply.back() == '\n') reply.pop_back();
    return Error(reply.substr(6));
  }
  const std::string daemon = "mtmd at " + socketPath;
  if (err == EAGAIN || err == EWOULDBLOCK) return Error(daemon + " gave no answer within " + std::to_string(timeout.count()) + " ms");
  if (err != 0) return Error::fromErrno("lost the connection to " + daemon + " before its answer", err);
  return Error(daemon + " closed the connection without an answer (is it stopping? its log says why)");
}

}  // namespace mtm::daemon
