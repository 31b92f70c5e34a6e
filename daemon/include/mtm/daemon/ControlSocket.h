#pragma once
// mtmd's control socket: a Unix stream socket, one request per connection.
//
//   request:  one line, at most kMaxRequest bytes: "attach PID", "detach PID",
//             "status text|json", "ping", and the CXL pool's "cxl-..." (CxlPool.h)
//   reply:    "ok\n" followed by the body, or "error MESSAGE\n"; then the server closes.
//             A handler may pass descriptors with an ok reply (SCM_RIGHTS, with its first
//             bytes).
//
// The server learns the caller's uid from SO_PEERCRED; what a uid may do is the handler's
// decision. It never blocks on a client: connections are read as data arrives, and one that
// is silent for kClientTimeout, or sends more than kMaxRequest bytes without a newline, is
// answered with an error and closed. A connection over its user's share is answered "busy"
// at once. Each round reads the connections it holds before it takes new ones, at most
// kAcceptsPerRound of them.

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mtm/Result.h"
#include "mtm/UniqueFd.h"

namespace mtm::daemon {

inline constexpr size_t kMaxRequest = 4096;
// Connections open at once: per user, so that no user can crowd out another; root has slots of
// its own; and all users other than root together (what mtmd's descriptors can afford).
inline constexpr size_t kClientsPerUser = 16;
inline constexpr size_t kClientsOfRoot = 32;
inline constexpr size_t kClientsOfUsers = 256;
inline constexpr auto kClientTimeout = std::chrono::seconds(5);
// Connections taken from the backlog per poll round. A user who reconnects as fast as it is
// told "busy" keeps the backlog full; without a bound, accepting would never end and the
// connections already taken (root's among them) would never be read.
inline constexpr size_t kAcceptsPerRound = 64;

struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
};

// What a request gets back: a body, or an error message.
using Reply = Result<std::string>;

class ControlServer {
 public:
  // `passFds`: descriptors to send with an ok reply (the server sends them, the handler keeps
  // owning them).
  using Handler = std::function<Reply(const std::string& request, const Peer& peer, std::vector<int>* passFds)>;

  // Binds `path` (creating its directory, mode 0755; the socket 0666, access is decided per
  // request). A stale socket file is replaced; callers hold the instance lock first.
  static Result<ControlServer> open(const std::string& path, Handler handler);
  ControlServer(ControlServer&& other) noexcept;
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;
  ~ControlServer();

  // The descriptors to poll (listening socket and clients), and what to do when poll says so.
  std::vector<pollfd> pollFds() const;
  void onReady(const std::vector<pollfd>& ready);
  // Closes clients that have been silent too long (call at least once a second).
  void expireClients();

  const std::string& path() const { return path_; }

 private:
  struct Client {
    UniqueFd fd;  // closed when the client is erased
    Peer peer;
    std::string buffer;
    std::chrono::steady_clock::time_point since;
  };
  ControlServer(UniqueFd fd, std::string path, Handler handler)
      : fd_(std::move(fd)), path_(std::move(path)), handler_(std::move(handler)) {}
  void accept();
  // Why a new connection from `uid` is one too many (empty: it is not).
  std::string overShare(uid_t uid) const;
  void read(int fd);
  void finish(int fd, const Reply& reply, const std::vector<int>& passFds = {});

  UniqueFd fd_;
  std::string path_;
  Handler handler_;
  std::map<int, Client> clients_;  // by descriptor
};

// A listening, non-blocking Unix stream socket at `path` with file mode `mode`, replacing a stale
// one and creating its directory (0755); errors name `setting`, the config key that chose path.
Result<UniqueFd> listenUnix(const std::string& path, mode_t mode, const std::string& setting);

// Sends one request and returns the reply body. A daemon that is not there (no socket file,
// nobody listening) is an error with errnum ENOENT or ECONNREFUSED; a daemon's "error ..." is
// an error with its message; no answer in time, a connection closed or reset without one each
// say so.
Reply controlRequest(const std::string& socketPath, const std::string& request,
                     std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace mtm::daemon
