// mtmd's Prometheus metrics: the exposition promtool accepts, Debian's Prometheus server scraping
// it and answering for a managed process, the HTTP edges (404, 405, a silent client, a Unix
// socket), an address in use, a reload that moves the listener.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <regex>
#include <thread>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "ChildProcess.h"
#include "DaemonFixture.h"
#include "Run.h"
#include "Skip.h"

using mtm::test::bin;
using mtm::test::ChildProcess;
using mtm::test::Daemon;
using mtm::test::run;
using mtm::test::TempDir;

namespace {

// "127.0.0.1:PORT" from the daemon's "metrics at http://..." log line ("" when none).
std::string metricsAddress(const Daemon& d, int nth = 1) {
  const std::string log = d.process->log();
  std::regex line("metrics at http://([0-9.]+:[0-9]+)/metrics");
  std::string found;
  int n = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator(); ++it)
    if (++n == nth) found = (*it)[1];
  return found;
}

// A connected socket to "HOST:PORT" (IPv4) or a Unix socket path; -1 on failure.
int connectTo(const std::string& address) {
  if (!address.empty() && address[0] == '/') {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a = mtm::test::unixAddress(address);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
    ::close(fd);
    return -1;
  }
  const auto colon = address.rfind(':');
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  ::inet_pton(AF_INET, address.substr(0, colon).c_str(), &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  ::close(fd);
  return -1;
}

// The whole HTTP response to `request` ("GET /metrics"), "" when nothing answers.
std::string http(const std::string& address, const std::string& request) {
  int fd = connectTo(address);
  if (fd < 0) return "";
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string bytes = request + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";
  if (::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) != ssize_t(bytes.size())) {
    ::close(fd);
    return "";
  }
  std::string out;
  char buf[8192];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

std::string body(const std::string& response) {
  const auto at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

std::string urlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-')
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

// The PromQL queries of the Grafana dashboard (contrib/grafana), with its variables filled in.
std::vector<std::string> dashboardQueries() {
  std::vector<std::string> out;
  const YAML::Node dashboard = YAML::LoadFile(mtm::test::sourceDir() + "/contrib/grafana/mtm-dashboard.json");
  for (const auto& panel : dashboard["panels"])
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"].as<std::string>();
      for (auto [from, to] : {std::pair<std::string, std::string>{"$__rate_interval", "1m"}, {"$instance", ".*"}})
        for (auto at = expr.find(from); at != std::string::npos; at = expr.find(from)) expr.replace(at, from.size(), to);
      out.push_back(expr);
    }
  return out;
}

// A TCP port nobody listens on now.
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("mtmd's metrics pass promtool and a Prometheus server scrapes them per managed process", "[metrics][host]") {
  MTM_REQUIRE_ROOT("the accessed-bit source, for the profiler's series");
  Daemon d("profiler:\n  interval_ms: 200\n");
  const std::string address = metricsAddress(d);
  REQUIRE(!address.empty());
  ChildProcess workload({bin("mtm-test-hotset"), "--size", "64M", "--hot-fraction", "0.25", "--phases", "1", "--phase-seconds", "60"},
                        d.dir.path() + "/workload.log");
  const std::string pid = std::to_string(workload.pid());
  REQUIRE(d.ctl({"attach", pid}).exitCode == 0);

  const std::string who = "cgroup=\"[^\"]*\",comm=\"mtm-test-hotset\",pid=\"" + pid + "\"";
  const std::vector<std::string> expected{"mtm_target_bytes\\{" + who + ",tier=\"tier0\"\\} [1-9]",
                                          "mtm_target_hot_bytes\\{" + who + "\\} ",
                                          "mtm_target_promoted_pages_total\\{" + who + "\\} 0",
                                          "mtm_tier_free_bytes\\{tier=\"tier0\"\\} [1-9]",
                                          "mtm_tier_kernel_reserve_bytes\\{tier=\"tier0\"\\} [1-9]",
                                          "mtm_profiler_checks_total [1-9]",
                                          "mtm_profiler_source_info\\{source=\"[a-z_]+\"\\} 1",
                                          "mtm_interval_duration_seconds_count [1-9]",
                                          "mtm_plan_pages_bucket\\{le=\"\\+Inf\"\\} [1-9]",
                                          "mtm_build_info\\{version=\"" MTM_VERSION "\"\\} 1",
                                          "mtm_kernel_vmstat_total\\{counter=\"pgmigrate_success\"\\} [0-9]",
                                          "mtm_mover_pages_in_flight 0"};
  auto has = [](const std::string& text, const std::string& series) { return std::regex_search(text, std::regex("(^|\n)" + series)); };
  // Until every series is there (a slow build profiles the workload's pages over a few intervals).
  std::string exposition;
  for (int i = 0; i < 100; ++i) {
    exposition = body(http(address, "GET /metrics"));
    if (std::all_of(expected.begin(), expected.end(), [&](const std::string& s) { return has(exposition, s); })) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(exposition);
  for (const std::string& series : expected) CHECK(has(exposition, series));

  // promtool: the format, and Prometheus's naming conventions (units, _total).
  TempDir dir;
  const std::string file = dir.write("metrics.txt", exposition);
  auto lint = run({"/bin/sh", "-c", "promtool check metrics < " + file});
  INFO(lint.out << lint.err);
  CHECK(lint.exitCode == 0);

  // Debian's Prometheus server scrapes mtmd once a second; its HTTP API then answers for the pid.
  const int port = freePort();
  const std::string config = dir.write("prometheus.yml",
                                       "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: mtmd\n"
                                       "    static_configs:\n      - targets: ['" +
                                           address + "']\n");
  ChildProcess prometheus({"/usr/bin/prometheus", "--config.file=" + config, "--storage.tsdb.path=" + dir.path() + "/tsdb",
                           "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                          dir.path() + "/prometheus.log");
  const std::string query = "GET /api/v1/query?query=mtm_target_hot_top_tier_bytes%7Bpid%3D%22" + pid + "%22%7D";
  std::string answer;
  for (int i = 0; i < 60 && answer.find("\"pid\":\"" + pid + "\"") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    answer = body(http("127.0.0.1:" + std::to_string(port), query));
  }
  INFO(answer << "\n" << prometheus.log());
  CHECK(answer.find("\"status\":\"success\"") != std::string::npos);
  CHECK(answer.find("\"comm\":\"mtm-test-hotset\"") != std::string::npos);
  CHECK(answer.find("\"job\":\"mtmd\"") != std::string::npos);
  auto up = body(http("127.0.0.1:" + std::to_string(port), "GET /api/v1/query?query=up%7Bjob%3D%22mtmd%22%7D"));
  CHECK(up.find("\"value\":[") != std::string::npos);
  CHECK(up.find(",\"1\"]") != std::string::npos);

  // The Grafana dashboard: every metric it names is served, and every query runs on this server.
  const auto queries = dashboardQueries();
  CHECK(queries.size() >= 10);
  std::regex metricName("mtm_[a-z_]+");
  for (const auto& expr : queries) {
    INFO(expr);
    for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metricName); it != std::sregex_iterator(); ++it) {
      std::string name = it->str();
      if (name.size() > 7 && name.compare(name.size() - 7, 7, "_bucket") == 0) name.resize(name.size() - 7);
      // Failures by errno have no series until a page fails to move.
      if (name == "mtm_target_failed_pages_total") continue;
      INFO(name);
      CHECK(exposition.find("# TYPE " + name + " ") != std::string::npos);
    }
    const auto result = body(http("127.0.0.1:" + std::to_string(port), "GET /api/v1/query?query=" + urlEncode(expr)));
    CHECK(result.find("\"status\":\"success\"") != std::string::npos);
  }
  prometheus.signal(SIGTERM);
  prometheus.wait();
}

TEST_CASE("the metrics server answers 404 and 405, outlasts a silent client and serves a Unix socket", "[metrics][host]") {
  Daemon d;
  const std::string address = metricsAddress(d);
  REQUIRE(!address.empty());
  CHECK(http(address, "GET /nothing").rfind("HTTP/1.1 404 ", 0) == 0);
  CHECK(http(address, "POST /metrics").rfind("HTTP/1.1 405 ", 0) == 0);
  CHECK(http(address, "GET /").rfind("HTTP/1.1 200 ", 0) == 0);
  const auto head = http(address, "HEAD /metrics");
  CHECK(head.rfind("HTTP/1.1 200 ", 0) == 0);
  CHECK(body(head).empty());
  // A client that connects and says nothing holds no one up.
  std::vector<int> silent;
  for (int i = 0; i < 8; ++i) silent.push_back(connectTo(address));
  const auto start = std::chrono::steady_clock::now();
  const auto ok = http(address, "GET /metrics");
  CHECK(ok.rfind("HTTP/1.1 200 ", 0) == 0);
  CHECK(ok.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  for (int fd : silent) ::close(fd);
  CHECK(d.ctl({"status"}).exitCode == 0);

  // On a Unix socket: root's only (mode 0600), same exposition.
  TempDir sockets;
  const std::string path = sockets.path() + "/metrics.sock";
  Daemon onSocket("", path);
  CHECK(onSocket.process->log().find("metrics at unix:" + path + "/metrics") != std::string::npos);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(body(http(path, "GET /metrics")).find("\nmtm_targets 0\n") != std::string::npos);
}

TEST_CASE("mtmd runs on without metrics when their address is taken, and a reload moves the listener", "[metrics][host]") {
  Daemon first;
  const std::string taken = metricsAddress(first);
  REQUIRE(!taken.empty());
  Daemon second("", taken);
  CHECK(second.process->log().find("metrics: cannot listen on " + taken +
                                   " (daemon.metrics): Address already in use: "
                                   "running without metrics") != std::string::npos);
  CHECK(second.ctl({"status"}).exitCode == 0);

  // SIGHUP with another address: the old one closes, the new one serves.
  ::unlink(second.config.c_str());
  mtm::test::daemonConfig(second.dir, "", "127.0.0.1:0");
  second.process->signal(SIGHUP);
  REQUIRE(second.process->waitForLog("reloaded config="));
  const std::string moved = metricsAddress(second);
  REQUIRE(!moved.empty());
  CHECK(moved != taken);
  CHECK(http(moved, "GET /metrics").rfind("HTTP/1.1 200 ", 0) == 0);
  CHECK(http(taken, "GET /metrics").rfind("HTTP/1.1 200 ", 0) == 0);  // still the first daemon's
}

TEST_CASE("mtmctl run --metrics serves the embedded manager's metrics while the command runs", "[metrics][host]") {
  TempDir dir;
  ChildProcess ctl({bin("mtmctl"), "run", "--metrics", "127.0.0.1:0", "--", "/bin/sleep", "3"}, dir.path() + "/run.log");
  REQUIRE(ctl.waitForLog("metrics at http://"));
  std::smatch m;
  const std::string log = ctl.log();
  REQUIRE(std::regex_search(log, m, std::regex("metrics at http://([0-9.]+:[0-9]+)/metrics")));
  std::string exposition;
  for (int i = 0; i < 30 && exposition.find("comm=\"sleep\"") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    exposition = body(http(m[1], "GET /metrics"));
  }
  CHECK(exposition.find("\nmtm_targets 1\n") != std::string::npos);
  CHECK(exposition.find("mtm_target_bytes{cgroup=") != std::string::npos);
  CHECK(ctl.wait() == 0);
  auto bad = run({bin("mtmctl"), "run", "--metrics", "9477", "--", "/bin/true"});
  CHECK(bad.exitCode == 1);
  CHECK(bad.err.find("mtmctl: --metrics 9477: expected off, an absolute Unix socket path") == 0);
}

TEST_CASE("with policy.predict on, status and metrics show what predictive placement learned and did", "[metrics][host]") {
  MTM_REQUIRE_ROOT();
  Daemon on("policy:\n  predict:\n    mode: on\n");
  const auto text = on.ctl({"status"});
  REQUIRE(text.exitCode == 0);
  CHECK(text.out.find("prediction: 0 group(s), 0 active, 0 transition(s); 0 prediction(s), 0 hit(s), 0 miss(es)") != std::string::npos);
  const auto json = on.ctl({"status", "--format", "json"});
  REQUIRE(json.exitCode == 0);
  const YAML::Node status = YAML::Load(json.out);  // JSON is YAML
  REQUIRE(status["prediction"]);
  CHECK(status["prediction"]["groups"].as<int>() == 0);
  CHECK(status["prediction"]["mispredicted_bytes"].as<int>() == 0);
  const std::string exposition = body(http(metricsAddress(on), "GET /metrics"));
  for (const char* series : {"\nmtm_predict_groups 0\n", "\nmtm_predict_hits_total 0\n", "\nmtm_predict_mispredicted_bytes_total 0\n"})
    CHECK(exposition.find(series) != std::string::npos);
  // Off (the default): neither says a word about it.
  Daemon off;
  CHECK(off.ctl({"status"}).out.find("prediction:") == std::string::npos);
  CHECK(body(http(metricsAddress(off), "GET /metrics")).find("mtm_predict_") == std::string::npos);
  // mtmctl run managing the command itself closes with the same figures (and, off, without them).
  TempDir dir;
  const std::string config = dir.write("predict.yaml", "policy:\n  predict:\n    mode: on\n");
  for (const bool predict : {true, false}) {
    auto ran = run({bin("mtmctl"), "--config", predict ? config : daemonConfig(dir), "run", "--embedded", "--", "/bin/sleep", "1.5"});
    INFO(ran.err);
    CHECK(ran.exitCode == 0);
    CHECK(ran.err.find(" exited (status 0); ") != std::string::npos);
    CHECK((ran.err.find("\nmtm: prediction: 0 group(s), 0 active, 0 transition(s); 0 prediction(s), 0 hit(s), 0 miss(es); predicted 0.0 "
                        "MiB, mispredicted 0.0 MiB\n") != std::string::npos) == predict);
  }
}
