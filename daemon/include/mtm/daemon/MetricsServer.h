#pragma once
// Serves Prometheus's text exposition over HTTP (GET /metrics) on a thread of its own, from the
// last exposition the owner published -- a function that renders figures copied when it was
// made, called on this thread at the first scrape after it (so the owner's loop neither renders
// nor waits, and nothing is rendered that nobody asks for). The thread never touches the
// manager, and a slow or silent client delays no one (connections are read and written as the socket allows, at most
// kMetricsClients at once, each dropped after kMetricsClientTimeout).
//
// Debian's civetweb (prometheus-cpp's own server) is built without Unix sockets and IPv6
// (mg_check_feature), which daemon.metrics offers; hence this small server. prometheus-cpp
// makes the text (MetricsRender.h).

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mtm/Result.h"
#include "mtm/UniqueFd.h"
#include "mtm/config/ListenAddress.h"

namespace mtm::daemon {

inline constexpr size_t kMetricsClients = 64;
inline constexpr auto kMetricsClientTimeout = std::chrono::seconds(10);
inline constexpr size_t kMaxHttpRequest = 8192;

class MetricsServer {
 public:
  // Listens at `at` (not off). `setting` names the config key for errors ("daemon.metrics").
  static Result<std::unique_ptr<MetricsServer>> start(const config::ListenAddress& at, const std::string& setting);
  ~MetricsServer();  // stops the thread; removes a Unix socket
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The exposition to serve from now on (any thread): rendered by `render` when first asked for.
  using Exposition = std::function<std::string()>;
  void publish(Exposition render);
  // Where it listens, with the port the kernel picked for port 0: "127.0.0.1:41234".
  const std::string& address() const { return address_; }
  // Where to scrape: "http://127.0.0.1:41234/metrics", or "unix:/run/mtm/m.sock/metrics".
  std::string url() const { return (unixPath_.empty() ? "http://" : "unix:") + address_ + "/metrics"; }

 private:
  MetricsServer(UniqueFd listen, std::string address, std::string unixPath);
  void run();
  // The HTTP reply to one request (its bytes up to the blank line).
  std::string respond(const std::string& request);

  UniqueFd listen_;
  UniqueFd stop_;  // an eventfd: written by the destructor
  std::string address_;
  std::string unixPath_;
  // The text to serve: rendered from the latest exposition, on the server thread.
  std::string current();

  std::mutex mu_;
  Exposition render_;  // published, not rendered yet
  std::shared_ptr<const std::string> text_;
  std::thread thread_;
};

}  // namespace mtm::daemon
