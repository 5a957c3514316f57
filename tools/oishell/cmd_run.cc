// `oishell run`: one command confined by the compiled policy.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/ioctl.h>
#include <termios.h>

#include <mutex>
#include <optional>

#include "base/terminal_text.h"
#include <limits.h>
#include <stdlib.h>

#include "policy/compile.h"
#include "policy/live_policy.h"
#include "policy/paths.h"
#include "base/startup_trace.h"
#include "runtime/outside/event_log.h"
#include "runtime/outside/sandbox.h"
#include "runtime/outside/terminal_relay.h"
#include "tools/oishell/command.h"
#include "tools/oishell/live_policy_events.h"
#include "tools/oishell/policy_watch.h"
#include "tools/oishell/policy_flags.h"
#include "tools/oishell/run_ask.h"
#include "tools/oishell/run_confined.h"

namespace oishell::cli {
namespace {

constexpr const char* kUsage =
    "usage: oishell run [--policy FILE | --profile NAME] [--workspace DIR] [--ro PATH]... [--rw PATH]...\n"
    "                   [--hide PATH]... [--unix PATH]... [--allow-domain D]... [--allow-udp HOST:PORT]...\n"
    "                   [--net none|proxy] [--env K=V]...\n"
    "                   [--timeout DUR] [--memory SIZE] [--allow-home-workspace] [--events FILE | --events-fd N]\n"
    "                   [--watch-policy] -- CMD [ARGS...]\n"
    "\n"
    "Runs CMD confined by the policy (the `default` profile unless --policy/--profile). Flags add to the policy;\n"
    "they never weaken a `hide` or `deny`.\n"
    "--watch-policy (with --policy FILE): FILE is read again whenever it changes and its network section applied to\n"
    "the running sandbox (event policy.changed); an edit that does not validate, or that changes another section,\n"
    "keeps the policy in force (event policy.rejected).\n"
    "Exit status: CMD's own; 128+N when CMD was killed by signal N; 125 the policy is invalid; 126 the sandbox\n"
    "could not be built (or CMD is not executable); 127 CMD was not found.\n";

// The options parse() reads (and `oishell completion` offers): the policy flags, then where events go.
const std::vector<completion::Option>& run_options() {
  static const std::vector<completion::Option> options = [] {
    std::vector<completion::Option> o = policy_flag_options();
    o.push_back({{"--events"}, completion::Value::file, "FILE", "write the events as JSON lines to FILE", {}});
    o.push_back({{"--events-fd"}, completion::Value::text, "N", "write the events as JSON lines to fd N", {}});
    o.push_back({{"--watch-policy"}, completion::Value::none, "",
                 "apply the policy file's network section again whenever the file changes", {}});
    return o;
  }();
  return options;
}

struct RunArgs {
  PolicySource source;
  PolicyOverrides overrides;
  std::string events_file;
  int events_fd = -1;
  bool watch_policy = false;
  std::vector<std::string> command;
};

// Returns an empty string on success, else the usage error.
std::string parse(int argc, char** argv, RunArgs* out, bool* help) {
  auto other = [out](const std::string& flag, const std::string& value) -> std::string {
    if (flag == "--events") {
      out->events_file = value;
    } else if (flag == "--events-fd") {
      char* end = nullptr;
      long fd = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || fd < 0 || fd > 1 << 20) return "--events-fd needs a file descriptor number";
      out->events_fd = static_cast<int>(fd);
    } else if (flag == "--watch-policy") {
      out->watch_policy = true;
    } else {
      return "unknown option " + flag;  // in run_options() but not handled here
    }
    return "";
  };
  if (std::string error = parse_command_args(argc, argv, run_options(), &out->source, &out->overrides, other,
                                             &out->command, help);
      !error.empty() || *help) {
    return error;
  }
  if (!out->events_file.empty() && out->events_fd >= 0) return "--events and --events-fd exclude each other";
  if (out->command.empty()) return "no command given (oishell run [options] -- CMD [ARGS...])";
  if (out->watch_policy && out->source.file.empty()) return "--watch-policy needs --policy FILE (a file to watch)";
  return "";
}

// A line for the user about a live policy change (policy.changed / policy.rejected), escaped.
std::string describe_policy_event(const nlohmann::json& event) {
  auto list = [&](const char* key) {
    std::string out;
    if (auto it = event.find(key); it != event.end() && it->is_array()) {
      for (const auto& line : *it) {
        if (line.is_string()) out += "\n  " + escape_for_terminal(line.get<std::string>());
      }
    }
    return out;
  };
  if (event.value("event", "") == "policy.rejected") {
    return "policy file not applied (the policy in force is unchanged):" + list("errors");
  }
  std::string text = "policy changed";
  std::string widened = list("widened"), narrowed = list("narrowed");
  if (widened.empty() && narrowed.empty()) text += ": nothing the network allows is different";
  if (!widened.empty()) text += "; now allowed:" + widened;
  if (!narrowed.empty()) text += "; no longer allowed:" + narrowed;
  uint64_t closed = event.value("closed_connections", uint64_t{0}) + event.value("ended_associations", uint64_t{0});
  if (closed) text += "\n  " + std::to_string(closed) + " open connection(s) to what is no longer allowed closed";
  return text;
}

// Events go to the --events destination (if any); what the user must know also goes to stderr, with everything
// that came from inside (paths, names) escaped. While the command's terminal is relayed (raw mode, the command's
// screen), the lines wait and are printed once the terminal is the user's again.
class RunEventSink final : public EventSink {
 public:
  RunEventSink(std::unique_ptr<EventSink> file, EventSink* also) : file_(std::move(file)), also_(also) {}
  void emit(const nlohmann::json& event) override {
    if (file_) file_->emit(event);
    if (also_) also_->emit(event);
    const std::string kind = event.value("event", "");
    if (kind == "start" && event.contains("degraded")) {
      for (const auto& d : event["degraded"]) {
        if (d.is_string()) say("degraded: " + escape_for_terminal(d.get<std::string>()));
      }
    }
    const char* key = kind == "exit" ? "protected_changed" : kind == "protected_changed" ? "paths" : nullptr;
    if (key && event.contains(key)) {
      for (const auto& p : event[key]) {
        if (p.is_string()) say("protected path changed during the run: " + escape_for_terminal(p.get<std::string>()));
      }
    }
    if (kind == "policy.changed" || kind == "policy.rejected") say(describe_policy_event(event));
    if (kind == "repo_neutralised") {
      say("git repository neutralised: " + escape_for_terminal(event.value("path", "")) + ": " +
          escape_for_terminal(event.value("found", "")) + "; " + escape_for_terminal(event.value("action", "")));
    }
  }
  void hold(bool on) {
    std::lock_guard lock(mutex_);
    holding_ = on;
    if (on) return;
    for (const auto& line : held_) std::fprintf(stderr, "oishell: %s\n", line.c_str());
    held_.clear();
  }

 private:
  void say(const std::string& line) {
    std::lock_guard lock(mutex_);
    if (holding_) {
      held_.push_back(line);
    } else {
      std::fprintf(stderr, "oishell: %s\n", line.c_str());
    }
  }
  std::unique_ptr<EventSink> file_;
  EventSink* also_;
  std::mutex mutex_;
  bool holding_ = false;
  std::vector<std::string> held_;
};

// Why code inside could change `file` (then it could widen its own policy), or "" when it cannot: the file, or its
// directory (a rename replaces the file), lies in a read-write bind.
std::string writable_inside(const SandboxSpec& spec, const std::string& file) {
  char resolved[PATH_MAX];
  std::string real = ::realpath(file.c_str(), resolved) ? std::string(resolved) : file;
  for (const MountStep& step : spec.mounts) {
    if (step.kind == MountStep::Kind::bind_rw && policy::path_within(real, step.source)) {
      return real + " is writable inside the sandbox (under " + step.source +
             "): code inside could widen its own policy. Keep the policy file outside the workspace and every "
             "read-write path";
    }
  }
  return "";
}

// When any of fds 0-2 is the user's terminal, the command gets a terminal of the sandbox's own at those fds
// (runtime/inside/pty.h), relayed by this process (runtime/outside/terminal_relay.h): the user's terminal never enters.
std::optional<TerminalRequest> terminal_request() {
  TerminalRequest request;
  bool any = false;
  for (int fd = 0; fd < 3; ++fd) {
    request.stdio[fd] = ::isatty(fd) == 1;
    if (request.stdio[fd] && !any) {
      any = true;
      (void)::ioctl(fd, TIOCGWINSZ, &request.size);
    }
  }
  if (!any) return std::nullopt;
  termios modes;
  if (request.stdio[0] && ::tcgetattr(0, &modes) == 0) request.modes = modes;
  return request;
}

// A forwarded signal that came before the command could get it, taken from the pending set; 0 when none.
int take_pending_signal(const sigset_t& forwarded) {
  const timespec now{0, 0};
  const int sig = ::sigtimedwait(&forwarded, nullptr, &now);
  return sig > 0 ? sig : 0;
}

int run(int argc, char** argv) {
  trace_startup("run: start");
  // Signals the user sends to oishell go to the command (it runs in its own session, so the terminal's SIGINT does
  // not reach it directly). Blocked first thing, before sandbox init is cloned or any thread starts, so that none
  // is lost at any moment: until the sandbox is built they stay pending (and end the run with 128+N, unbuilt);
  // from then on the sandbox's monitor reads them from a signalfd, holding those that come before the command is
  // live until it is. Sandbox init and the command start with an empty mask.
  const std::vector<int> forwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int sig : forwarded) sigaddset(&blocked, sig);
  ::pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  RunArgs args;
  bool help = false;
  if (std::string error = parse(argc, argv, &args, &help); !error.empty()) {
    std::fprintf(stderr, "oishell run: %s\n\n%s", error.c_str(), kUsage);
    return kExitUsage;
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  ConfinedCommand c;
  c.source = std::move(args.source);
  c.overrides = std::move(args.overrides);
  c.events_file = std::move(args.events_file);
  c.events_fd = args.events_fd;
  c.command = std::move(args.command);
  c.watch_policy = args.watch_policy;
  return run_confined(c);
}

}  // namespace

int run_confined(const ConfinedCommand& args) {
  const std::vector<int> forwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int sig : forwarded) sigaddset(&blocked, sig);
  ::pthread_sigmask(SIG_BLOCK, &blocked, nullptr);  // already blocked by the verb; here for other callers
  // Sandbox init needs nothing of the policy to create its namespaces and map its ids: it starts now and waits
  // for the policy, so that both take their time at once. A policy that does not compile kills it again.
  auto init = InitProcess::clone();
  if (!init.is_ok()) {
    std::fprintf(stderr, "oishell: sandbox could not be built: %s\n", init.status().message().c_str());
    return kExitSandboxFailed;
  }
  std::unique_ptr<EventSink> file;
  if (!args.events_file.empty()) {
    auto sink = JsonLinesEventSink::open_file(args.events_file);
    if (!sink.is_ok()) {
      std::fprintf(stderr, "oishell %s: --events: %s\n", args.verb, sink.status().message().c_str());
      return kExitUsage;
    }
    file = std::move(sink.value());
  } else if (args.events_fd >= 0) {
    int fd = ::fcntl(args.events_fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
      std::fprintf(stderr, "oishell %s: --events-fd %d: %s\n", args.verb, args.events_fd, errno_text(errno).c_str());
      return kExitUsage;
    }
    ::close(args.events_fd);
    file = std::make_unique<JsonLinesEventSink>(UniqueFd(fd));
  }
  RunEventSink events(std::move(file), args.also_events);

  // With --watch-policy the policy is kept, so that the file's later versions are compared with it.
  std::optional<policy::LivePolicy> live;
  Result<SandboxSpec> spec = Status::error("not compiled");
  if (args.watch_policy) {
    auto loaded = policy::LivePolicy::load(args.source, args.overrides, CompileContext::from_process());
    if (loaded.is_ok()) {
      live.emplace(std::move(loaded.value()));
      spec = live->started();
      if (std::string why = writable_inside(live->started(), args.source.file); !why.empty()) {
        std::fprintf(stderr, "oishell %s: --watch-policy: %s\n", args.verb, why.c_str());
        return kExitUsage;
      }
    } else {
      spec = loaded.status();
    }
  } else {
    spec = compile_policy(args.source, args.overrides, CompileContext::from_process());
  }
  if (!spec.is_ok()) {
    std::fprintf(stderr, "oishell: policy: %s\n", spec.status().message().c_str());
    return kExitPolicyInvalid;
  }
  if (args.adjust_spec) args.adjust_spec(*spec);
  trace_startup("run: policy compiled");

  // A closed --events pipe must not kill oishell (the sandbox's processes start with default dispositions).
  ::signal(SIGPIPE, SIG_IGN);

  TerminalAsker asker;
  SandboxOptions options;
  options.init = std::move(init.value());
  SpawnRequest request;
  request.argv = args.command;
  request.stdio = SpawnRequest::Stdio::inherit;
  request.terminal = terminal_request();
  request.ends_sandbox = true;  // the command's end is the sandbox's
  options.first_process = request;
  // This thread waits on the sandbox from here to the command's end, so it serves the sandbox itself.
  options.monitor_on_caller = true;
  options.forward_signals = forwarded;
  if (spec->network.mode == NetMode::proxy && spec->network.on_unlisted == OnUnlisted::ask) {
    options.ask = asker.handler();  // otherwise no question can come: no terminal thread
  }
  // A signal that came while the policy compiled: the sandbox is not built (init is killed on return).
  if (int sig = take_pending_signal(blocked)) return 128 + sig;
  auto sandbox = Sandbox::create(*spec, events, std::move(options));
  if (!sandbox.is_ok()) {
    // The supervisor stops building the sandbox when a forwarded signal comes, and leaves it pending.
    if (int sig = take_pending_signal(blocked)) return 128 + sig;
    std::fprintf(stderr, "oishell: sandbox could not be built: %s\n", sandbox.status().message().c_str());
    return kExitSandboxFailed;
  }
  // Ends before the sandbox does: a question answered late goes nowhere.
  auto questions_for = asker.attach(sandbox->get());
  trace_startup("run: sandbox ready");

  auto spawned = (*sandbox)->first_process();
  if (!spawned.is_ok()) {
    const int err = spawned.status().errno_value();
    if (args.before_shutdown) args.before_shutdown(**sandbox, err == ENOENT ? 127 : kExitSandboxFailed);
    (*sandbox)->shutdown();
    if (err == ENOENT) {
      std::fprintf(stderr, "oishell: %s: command not found\n", args.command[0].c_str());
      return 127;
    }
    std::fprintf(stderr, "oishell: %s: %s\n", args.command[0].c_str(), spawned.status().message().c_str());
    return kExitSandboxFailed;
  }
  trace_startup("run: command started");
  std::unique_ptr<PolicyWatch> watch;  // stopped before the sandbox is torn down
  if (live) {
    Sandbox* box = sandbox->get();
    auto started = PolicyWatch::start(args.source.file, [&live, box, &events] {
      events.emit(apply_live_change(*live, *box, live->propose_reload(), "file"));
    });
    if (!started.is_ok()) {
      (*sandbox)->shutdown();
      std::fprintf(stderr, "oishell: --watch-policy: %s\n", started.status().message().c_str());
      return kExitSandboxFailed;
    }
    watch = std::move(started.value());
  }
  std::unique_ptr<TerminalRelay> terminal;
  UniqueFd terminal_output;  // when only stdin is the terminal: where the terminal's echo goes
  if (spawned->terminal) {
    TerminalRelay::Ends ends;
    ends.input = request.terminal->stdio[0] ? 0 : -1;
    ends.output = request.terminal->stdio[1] ? 1 : request.terminal->stdio[2] ? 2 : -1;
    if (ends.output < 0) {
      terminal_output.reset(::open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC));
      ends.output = terminal_output.get();
    }
    // No question is being asked while the terminal changes hands.
    auto no_question = asker.hold_questions();
    Sandbox* box = sandbox->get();
    auto started = TerminalRelay::start(std::move(spawned->terminal), ends, [box] { box->wake_monitor(); });
    if (!started.is_ok()) {
      (*sandbox)->shutdown();
      std::fprintf(stderr, "oishell: the command's terminal: %s\n", started.status().message().c_str());
      return kExitSandboxFailed;
    }
    terminal = std::move(started.value());
    (*sandbox)->set_monitor_client(terminal.get());  // served while this thread waits for the command
    asker.attach_terminal(terminal.get());
    events.hold(true);
  }
  auto exit = (*sandbox)->wait(spawned->id);
  // The command's end is the sandbox's end: whatever it left running (a daemon) dies with init now.
  trace_startup("run: command exited");
  if (terminal) {
    {
      auto no_question = asker.hold_questions();
      asker.attach_terminal(nullptr);
    }
    (*sandbox)->set_monitor_client(nullptr);
    terminal->finish();
    events.hold(false);
  }
  watch.reset();  // no change applied while the sandbox is torn down
  const int status = exit.is_ok() ? exit->shell_status() : kExitSandboxFailed;
  if (args.before_shutdown) args.before_shutdown(**sandbox, status);
  (*sandbox)->shutdown();
  trace_startup("run: sandbox torn down");
  if (!exit.is_ok()) {
    std::fprintf(stderr, "oishell: %s\n", exit.status().message().c_str());
    return kExitSandboxFailed;
  }
  if (!exit->reason.empty()) std::fprintf(stderr, "oishell: killed: %s\n", exit->reason.c_str());
  return status;
}

namespace {

const Registration registration{{"run", "run a command in the sandbox", &run, &run_options,
                                  {completion::Value::command, "command", {}, true}}};

}  // namespace
}  // namespace oishell::cli
