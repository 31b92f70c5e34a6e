#include "mtm/daemon/MetricsServer.h"
#include "mtm/UniqueFd.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "mtm/Log.h"
#include "mtm/daemon/ControlSocket.h"

namespace mtm::daemon {
namespace {

using Clock = std::chrono::steady_clock;

Result<UniqueFd> listenTcp(const config::ListenAddress& at, const std::string& setting, std::string* address) {
  const bool v6 = at.kind == config::ListenAddress::Kind::tcp6;
  UniqueFd fd(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return Error::fromErrno(std::string("socket(") + (v6 ? "AF_INET6" : "AF_INET") + ")", errno);
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(at.port);
    ::inet_pton(AF_INET6, at.host.c_str(), &a->sin6_addr);
    ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(at.port);
    ::inet_pton(AF_INET, at.host.c_str(), &a->sin_addr);
    len = sizeof *a;
  }
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0)
    return Error::fromErrno("cannot listen on " + at.describe() + " (" + setting + ")", errno);
  if (::listen(fd.get(), SOMAXCONN) != 0) return Error::fromErrno("listen " + at.describe(), errno);
  // The port the kernel chose for port 0.
  len = sizeof addr;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  config::ListenAddress bound = at;
  bound.port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  *address = bound.describe();
  return fd;
}

std::string httpReply(const std::string& status, const std::string& contentType, const std::string& body, bool head,
                      const std::string& extraHeaders = "") {
  return "HTTP/1.1 " + status + "\r\nContent-Type: " + contentType + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         extraHeaders + "Connection: close\r\n\r\n" + (head ? "" : body);
}

struct Client {
  UniqueFd fd;  // closed when the client is erased
  std::string in;
  std::string out;
  size_t sent = 0;
  Clock::time_point since;
};

}  // namespace

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const config::ListenAddress& at, const std::string& setting) {
  std::string address;
  Result<UniqueFd> fd = Error("metrics: no listener (" + setting + " is off)");
  if (at.kind == config::ListenAddress::Kind::unix) {
    // Per-process data of every user's managed processes: root's alone.
    fd = listenUnix(at.path, 0600, setting);
    address = at.path;
  } else if (at.kind != config::ListenAddress::Kind::off) {
    fd = listenTcp(at, setting, &address);
  }
  if (!fd) return std::move(fd).takeError();
  return std::unique_ptr<MetricsServer>(
      new MetricsServer(std::move(*fd), address, at.kind == config::ListenAddress::Kind::unix ? at.path : ""));
}

MetricsServer::MetricsServer(UniqueFd listen, std::string address, std::string unixPath)
    : listen_(std::move(listen)),
      stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      address_(std::move(address)),
      unixPath_(std::move(unixPath)),
      text_(std::make_shared<const std::string>()),
      thread_([this] { run(); }) {}

MetricsServer::~MetricsServer() {
  const uint64_t one = 1;
  if (::write(stop_.get(), &one, sizeof one) != sizeof one) MTM_WARN("metrics: cannot stop the server thread");
  thread_.join();
  if (!unixPath_.empty()) ::unlink(unixPath_.c_str());
}

void MetricsServer::publish(Exposition render) {
  std::lock_guard lock(mu_);
  render_ = std::move(render);
}

std::string MetricsServer::current() {
  Exposition render;
  {
    std::lock_guard lock(mu_);
    render = std::move(render_);
    render_ = nullptr;
    if (!render) return *text_;
  }
  auto text = std::make_shared<const std::string>(render());  // without the lock: publish() never waits
  std::lock_guard lock(mu_);
  text_ = text;
  return *text;
}

std::string MetricsServer::respond(const std::string& request) {
  const auto lineEnd = request.find("\r\n");
  const std::string line = request.substr(0, lineEnd);
  const auto sp1 = line.find(' '), sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1 || line.compare(sp2 + 1, 5, "HTTP/") != 0)
    return httpReply("400 Bad Request", "text/plain", "not an HTTP request\n", false);
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  const bool head = method == "HEAD";
  if (method != "GET" && !head)
    return httpReply("405 Method Not Allowed", "text/plain", "only GET and HEAD\n", false, "Allow: GET, HEAD\r\n");
  if (target == "/metrics") return httpReply("200 OK", "text/plain; version=0.0.4; charset=utf-8", current(), head);
  if (target == "/") return httpReply("200 OK", "text/plain", "mtmd: Prometheus metrics at /metrics\n", head);
  return httpReply("404 Not Found", "text/plain", "no such page: " + target + " (metrics are at /metrics)\n", head);
}

void MetricsServer::run() {
  std::map<int, Client> clients;  // by descriptor
  auto drop = [&](int fd) { clients.erase(fd); };
  for (;;) {
    std::vector<pollfd> fds{{stop_.get(), POLLIN, 0}, {listen_.get(), POLLIN, 0}};
    for (const auto& [fd, c] : clients) fds.push_back({fd, static_cast<short>(c.out.empty() ? POLLIN : POLLOUT), 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) {
      MTM_ERROR("metrics: poll: {}; the metrics server stops", std::strerror(errno));
      break;
    }
    if (fds[0].revents) break;
    if (fds[1].revents) {
      for (;;) {
        UniqueFd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!fd) break;
        if (clients.size() >= kMetricsClients) continue;  // closed: the scraper retries at its next interval
        const int key = fd.get();
        clients[key] = Client{std::move(fd), {}, {}, 0, Clock::now()};
      }
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      const int fd = fds[i].fd;
      if (!fds[i].revents) continue;
      Client& c = clients[fd];
      if (c.out.empty()) {
        char buf[2048];
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
          if (n == 0 || (errno != EAGAIN && errno != EINTR)) drop(fd);
          continue;
        }
        c.in.append(buf, static_cast<size_t>(n));
        const auto end = c.in.find("\r\n\r\n");
        if (end != std::string::npos)
          c.out = respond(c.in.substr(0, end));
        else if (c.in.size() > kMaxHttpRequest)
          c.out = httpReply("431 Request Header Fields Too Large", "text/plain", "request too large\n", false);
        continue;
      }
      const ssize_t n = ::send(fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {
        drop(fd);
        continue;
      }
      c.sent += static_cast<size_t>(n);
      if (c.sent == c.out.size()) drop(fd);
    }
    const auto now = Clock::now();
    for (auto it = clients.begin(); it != clients.end();) {
      if (now - it->second.since > kMetricsClientTimeout) {
        it = clients.erase(it);
      } else {
        ++it;
      }
    }
  }
}

}  // namespace mtm::daemon
