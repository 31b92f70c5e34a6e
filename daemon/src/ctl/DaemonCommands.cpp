// mtmctl attach, detach, status, top and hint: requests to the running mtmd over its control socket.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

#include "ctl/Commands.h"
#include "mtm/Json.h"
#include "mtm/daemon/ControlSocket.h"
#include "mtm/daemon/SignalFd.h"

namespace mtm::daemon::ctl {
namespace {

struct DaemonOptions {
  std::string socket;  // empty: daemon.socket of the effective config
  int pid = 0;
  std::string format = "text";
  double refresh = 1;
  int count = 0;                    // top: refreshes before exiting (0: until interrupted)
  uint32_t phase = 0;               // hint phase
  std::vector<std::string> ranges;  // hint group: START-END, hex
};

Result<std::string> socketPath(const Global& global, const DaemonOptions& o) {
  if (!o.socket.empty()) return o.socket;
  auto cfg = effectiveConfig(global);
  if (!cfg) return std::move(cfg).takeError();
  return cfg->daemon.socket;
}

// Sends one request; an unreachable daemon gets a hint about starting it.
Result<std::string> ask(const Global& global, const DaemonOptions& o, const std::string& request) {
  auto path = socketPath(global, o);
  if (!path) return std::move(path).takeError();
  auto reply = controlRequest(*path, request);
  if (!reply && (reply.error().errnum() == ENOENT || reply.error().errnum() == ECONNREFUSED))
    return Error(reply.error().message() +
                 " -- is mtmd running? (systemctl start mtmd, or mtmctl run -- CMD to manage "
                 "one command without it)");
  return reply;
}

int print(const Result<std::string>& reply) {
  if (!reply) return fail(reply.error().message());
  std::fputs(reply->c_str(), stdout);
  return 0;
}

// attach and detach: mtmd's one line, or {"pid": N, "managed": true|false, "message": "..."}.
int printChange(const DaemonOptions& o, bool managed, const Result<std::string>& reply) {
  if (!reply || o.format != "json") return print(reply);
  std::string message = *reply;
  while (!message.empty() && message.back() == '\n') message.pop_back();
  JsonWriter w;
  w.beginObject().key("pid").value(o.pid).key("managed").value(managed).key("message").value(message).endObject();
  std::fputs(w.str().c_str(), stdout);
  return 0;
}

int runTop(const Global& global, const DaemonOptions& o) {
  auto signals = SignalFd::open({SIGINT, SIGTERM});
  if (!signals) return fail(signals.error().message());
  const bool tty = ::isatty(STDOUT_FILENO);
  for (int i = 0; o.count == 0 || i < o.count; ++i) {
    auto reply = ask(global, o, "status " + o.format);
    if (!reply) return fail(reply.error().message());
    if (o.format == "json") {  // one frame a line: {"frame": N, "status": {...}}
      std::string status = *reply;
      while (!status.empty() && status.back() == '\n') status.pop_back();
      std::printf("{\"frame\": %d, \"status\": %s}\n", i, status.c_str());
    } else {
      if (tty) std::fputs("\033[H\033[2J", stdout);
      std::printf("mtmctl top: every %.1f s, Ctrl-C quits\n\n%s", o.refresh, reply->c_str());
      if (!tty) std::fputs("\n", stdout);
    }
    std::fflush(stdout);
    if (o.count != 0 && i + 1 == o.count) break;
    auto sig = signals->wait(static_cast<int>(o.refresh * 1000));
    if (sig && *sig != 0) break;
  }
  return 0;
}

}  // namespace

void addDaemonCommands(CLI::App& parent, const Global& global, Commands& out) {
  auto o = std::make_shared<DaemonOptions>();
  auto socketOption = [&](CLI::App* cmd) {
    cmd->add_option("--socket", o->socket, "mtmd's control socket (default: daemon.socket of the config)");
  };
  auto formatOption = [&](CLI::App* cmd) {
    cmd->add_option("-f,--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  };
  auto* attach = parent.add_subcommand("attach", "Ask mtmd to manage a running process (yours, or any as root)");
  attach->add_option("PID", o->pid, "Process id")->required()->check(pidValidator());
  formatOption(attach);
  socketOption(attach);
  out.push_back({attach, [&global, o] { return printChange(*o, true, ask(global, *o, "attach " + std::to_string(o->pid))); }});

  auto* detach = parent.add_subcommand("detach", "Ask mtmd to stop managing a process (its pages stay where they are)");
  detach->add_option("PID", o->pid, "Process id")->required()->check(pidValidator());
  formatOption(detach);
  socketOption(detach);
  out.push_back({detach, [&global, o] { return printChange(*o, false, ask(global, *o, "detach " + std::to_string(o->pid))); }});

  auto* status = parent.add_subcommand("status", "What mtmd manages: tiers, processes, residency, migrations, profiler cost");
  formatOption(status);
  socketOption(status);
  out.push_back({status, [&global, o] { return print(ask(global, *o, "status " + o->format)); }});

  auto* top = parent.add_subcommand("top", "A live view of mtmd's status, refreshed until Ctrl-C");
  top->add_option("-n,--refresh", o->refresh, "Seconds between refreshes (default 1)")->check(CLI::Range(0.1, 3600.0));
  top->add_option("--count", o->count, "Exit after this many refreshes (default: never)")
      ->check(wholeNumberValidator(0, INT32_MAX, "a count of refreshes"));
  top->add_option("-f,--format", o->format, "text, or json: one status object a line per refresh")->check(CLI::IsMember({"text", "json"}));
  socketOption(top);
  out.push_back({top, [&global, o] { return runTop(global, *o); }});

  auto* hint = parent.add_subcommand("hint", "Tell mtmd what a process is about to do (predictive placement: policy.predict.mode on)");
  hint->require_subcommand(1);
  hint->footer(
      "Examples:\n"
      "  mtmctl hint phase 4242 3                      pid 4242 begins its phase 3 now\n"
      "  mtmctl hint group 4242 7f1200000000-7f1240000000 7f1300000000-7f1310000000\n"
      "                                                 these ranges are used together\n"
      "Programs can say the same through the C header mtm/hint.h.");
  auto* phase = hint->add_subcommand("phase", "PID begins phase N now: what its phase N used last time moves up at once");
  phase->add_option("PID", o->pid, "Process id (yours, or any as root)")->required()->check(pidValidator());
  phase->add_option("N", o->phase, "The phase's number, the program's own (0 to 4294967295)")
      ->required()
      ->check(wholeNumberValidator(0, UINT32_MAX, "a phase number"));
  socketOption(phase);
  out.push_back(
      {phase, [&global, o] { return print(ask(global, *o, "hint-phase " + std::to_string(o->pid) + " " + std::to_string(o->phase))); }});
  auto* group = hint->add_subcommand("group", "PID uses these address ranges together: they move up together when predicted");
  group->add_option("PID", o->pid, "Process id (yours, or any as root)")->required()->check(pidValidator());
  group->add_option("RANGE", o->ranges, "START-END, hex addresses (0x optional), at most 64")->required();
  socketOption(group);
  out.push_back({group, [&global, o] {
                   std::string request = "hint-group " + std::to_string(o->pid);
                   for (const auto& r : o->ranges) request += " " + r;
                   return print(ask(global, *o, request));
                 }});
}

}  // namespace mtm::daemon::ctl
