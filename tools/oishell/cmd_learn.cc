// `oishell learn`: runs a command in a learning sandbox and writes the least policy it needs on top of a base
// (policy/learn_writer.h). The learning sandbox is the base's sandbox with two changes: every call that names a path
// is shown to the supervisor, which records it and lets it through (runtime/outside/path_observer.h), and the
// network asks (or, with --allow-network, lets through) what the base does not list. A path the base does not show
// fails inside as it would under the base, but its name was seen: when the run failed and it learned a path to read,
// learn runs the command again with those paths visible read-only (at most kRounds runs), so that one call gets past
// each missing input. Writes are never granted during learning: they go where the base lets them, or fail.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "policy/compiler.h"
#include "policy/host_fs.h"
#include "policy/learn_writer.h"
#include "policy/load.h"
#include "policy/seccomp_sets.h"
#include "tools/oishell/command.h"
#include "tools/oishell/policy_flags.h"
#include "tools/oishell/run_confined.h"

namespace oishell::cli {
namespace {

constexpr int kRounds = 4;

constexpr const char* kUsage =
    "usage: oishell learn [--policy FILE | --profile NAME] [-o FILE] [--allow-network] [--workspace DIR]\n"
    "                     [run's policy flags]... -- CMD [ARGS...]\n"
    "\n"
    "Runs CMD in a learning sandbox (the base policy's, the `default` profile unless --policy/--profile) and writes\n"
    "a policy that extends the base with what the run needed: paths outside the workspace to read or write,\n"
    "destinations by name and port, system calls the base denies, and the memory and processes it used, each entry\n"
    "with a comment naming the program and how often. Paths the base hides stay hidden and are reported as wanted,\n"
    "not granted. -o FILE writes the policy there (stdout without -o); with --policy FILE and no -o, FILE itself is\n"
    "widened (its lines are kept, new entries added). Network destinations the base does not list are asked on the\n"
    "terminal, or allowed with --allow-network (a run you trust). A run that fails still yields a policy.\n"
    "Exit status: 0 the policy was written (even when CMD failed; stderr says so); 125 the policy is invalid; 126\n"
    "the sandbox could not be built; 2 usage.\n";

const std::vector<completion::Option>& learn_options() {
  static const std::vector<completion::Option> options = [] {
    std::vector<completion::Option> o = policy_flag_options();
    o.push_back({{"-o"}, completion::Value::file, "FILE", "write the learned policy to FILE", {}});
    o.push_back({{"--allow-network"}, completion::Value::none, "", "allow every destination during learning", {}});
    return o;
  }();
  return options;
}

struct LearnArgs {
  PolicySource source;
  PolicyOverrides overrides;
  std::string output;
  bool allow_network = false;
  std::vector<std::string> command;
};

std::string parse(int argc, char** argv, LearnArgs* out, bool* help) {
  auto other = [out](const std::string& flag, const std::string& value) -> std::string {
    if (flag == "-o") {
      out->output = value;
    } else if (flag == "--allow-network") {
      out->allow_network = true;
    } else {
      return "unknown option " + flag;
    }
    return "";
  };
  if (std::string error = parse_command_args(argc, argv, learn_options(), &out->source, &out->overrides, other,
                                             &out->command, help);
      !error.empty() || *help) {
    return error;
  }
  if (out->command.empty()) return "no command given (oishell learn [options] -- CMD [ARGS...])";
  return "";
}

// Whether deny set `set` refuses `syscall` whatever its arguments (a rule without conditions).
bool denied_outright(const std::string& set, const std::string& syscall) {
  const seccomp_sets::DenySet* found = seccomp_sets::find(set);
  if (found == nullptr) return false;
  for (const auto& rule : found->rules) {
    if (syscall == rule.syscall && rule.when.empty()) return true;
  }
  return false;
}

// What the run's events say: destinations let through, system calls denied.
class LearnEvents final : public EventSink {
 public:
  explicit LearnEvents(std::string program) : program_(std::move(program)) {}
  void emit(const nlohmann::json& event) override {
    const std::string kind = event.value("event", "");
    std::lock_guard lock(mutex_);
    if (kind == "net.allowed" && event.contains("host") && event.contains("port")) {
      const bool udp = event.value("protocol", "") == "udp";
      ++destinations_[{event.value("host", ""), event.value("port", 0), udp}];
    } else if (kind == "denied" && event.value("kind", "") == "syscall") {
      const std::string name = event.value("syscall", "");
      const std::string set = event.value("set", "");
      if (std::string why = seccomp_sets::why_not_liftable(name); !why.empty()) {
        // io_uring, set-id modes: no policy can allow them (policy/seccomp_sets.h, the floor).
        ++conditional_[name + " (" + set + ": no policy can allow it: " + why + ")"];
      } else if (denied_outright(set, name)) {
        ++syscalls_[name];
      } else {
        // Denied for its arguments only (a set-id mode, a namespace flag, a terminal ioctl): allow_syscalls would
        // take the whole call out of its set, so it is reported, never learned.
        ++conditional_[name + " (" + set + ": denied for its arguments; allow_syscalls would lift every check)"];
      }
    }
  }
  std::vector<std::string> not_granted() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [line, count] : conditional_) out.push_back("syscall " + line);
    return out;
  }
  void add_to(policy::LearnRun& run) const {
    std::lock_guard lock(mutex_);
    for (const auto& [key, count] : destinations_) {
      const auto& [host, port, udp] = key;
      if (host.empty() || port <= 0 || port > 65535) continue;
      run.destinations.push_back({host, static_cast<uint16_t>(port),
                                  udp ? HostRule::Protocol::udp : HostRule::Protocol::tcp, program_, count});
    }
    for (const auto& [name, count] : syscalls_) {
      if (!name.empty()) run.syscalls.push_back({name, program_, count});
    }
  }

 private:
  std::string program_;
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, int, bool>, uint64_t> destinations_;
  std::map<std::string, uint64_t> syscalls_;
  std::map<std::string, uint64_t> conditional_;
};

policy::LearnedPath::Mode mode_of(PathObservation::Mode mode) {
  switch (mode) {
    case PathObservation::Mode::read: return policy::LearnedPath::Mode::read;
    case PathObservation::Mode::exec: return policy::LearnedPath::Mode::exec;
    case PathObservation::Mode::write: return policy::LearnedPath::Mode::write;
  }
  return policy::LearnedPath::Mode::read;
}

// The `extends:` value for a new file at `output` (stdout: the current directory) on top of `source`.
std::string extends_value(const PolicySource& source, const std::string& output) {
  if (source.file.empty()) return source.profile.empty() ? "default" : source.profile;
  namespace fs = std::filesystem;
  const fs::path from = output.empty() ? fs::current_path() : fs::absolute(output).parent_path();
  return fs::relative(fs::absolute(source.file), from).string();
}

// The path as the host resolves it: the sandbox names paths as the host does, but through the host's symlinks
// (/bin -> usr/bin, /lib -> usr/lib on merged-/usr hosts), which the base shows by their targets. A missing path
// keeps its resolved parent.
std::string host_path(const std::string& path) {
  if (auto real = HostFs::real().real_path(path)) return *real;
  const auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return path;
  if (auto parent = HostFs::real().real_path(path.substr(0, slash))) return *parent + path.substr(slash);
  return path;
}

// The host shown read-only during learning, so that a read outside the base's view finds its file in the first
// run: each top-level directory the base does not show (not the kernel's trees, not /tmp, /run or /boot, not one
// that holds the home), and each entry of the home (the base's home is an empty scratch). Only real directories and
// files; what the base hides stays hidden (compile drops a bind a hide covers). Reads there are learned as any
// other; writes fail (read-only) and are learned for the next run.
std::vector<std::string> learning_view(const SandboxSpec& base, const std::string& home) {
  namespace fs = std::filesystem;
  auto shown = [&](const std::string& path) {
    for (const auto& m : base.mounts) {
      if (m.target == path || (path.rfind(m.target + "/", 0) == 0 && m.kind != MountStep::Kind::tmpfs)) return true;
    }
    return false;
  };
  auto plain = [](const fs::path& p) {
    std::error_code ec;
    const auto st = fs::symlink_status(p, ec);
    return !ec && (st.type() == fs::file_type::directory || st.type() == fs::file_type::regular) &&
           ::access(p.c_str(), R_OK) == 0;
  };
  std::vector<std::string> view;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/", ec)) {
    const std::string path = entry.path().string();
    static const std::set<std::string> skip = {"/proc", "/sys", "/dev", "/run", "/tmp", "/boot", "/lost+found"};
    if (skip.count(path) || shown(path) || !plain(entry.path())) continue;
    // Not one that holds the host's home or the sandbox's (a fallback /home/oishell is made inside it).
    bool holds_home = false;
    for (const std::string& h : {home, base.home_path}) {
      holds_home = holds_home || (!h.empty() && (h == path || h.rfind(path + "/", 0) == 0));
    }
    if (holds_home) continue;
    view.push_back(path);
  }
  if (!home.empty() && home != "/") {
    for (const auto& entry : fs::directory_iterator(home, ec)) {
      if (plain(entry.path()) && !shown(entry.path().string())) view.push_back(entry.path().string());
    }
  }
  std::sort(view.begin(), view.end());
  return view;
}

policy::LoadResult load_base(const PolicySource& source) {
  if (!source.file.empty()) return policy::load_policy_file(source.file);
  return policy::load_profile(source.profile.empty() ? "default" : source.profile);
}

int learn(int argc, char** argv) {
  const std::vector<int> forwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int sig : forwarded) sigaddset(&blocked, sig);
  ::pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  LearnArgs args;
  bool help = false;
  if (std::string error = parse(argc, argv, &args, &help); !error.empty()) {
    std::fprintf(stderr, "oishell learn: %s\n\n%s", error.c_str(), kUsage);
    return kExitUsage;
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  // Widen the base file itself when it is the output (or no output was named for a --policy base).
  std::string output = args.output;
  if (output.empty() && !args.source.file.empty()) output = args.source.file;
  const bool widening = !output.empty() && !args.source.file.empty() &&
                        std::filesystem::exists(output) && std::filesystem::equivalent(output, args.source.file);
  if (!output.empty() && !widening && std::filesystem::exists(output)) {
    std::fprintf(stderr, "oishell learn: %s exists; pass it as --policy to widen it, or name another -o\n",
                 output.c_str());
    return kExitUsage;
  }
  std::optional<std::string> existing;
  if (widening) {
    std::ifstream in(output);
    std::stringstream text;
    text << in.rdbuf();
    existing = text.str();
  }

  // The base, compiled as `run` compiles it: what it grants is not repeated in the output.
  const CompileContext context = CompileContext::from_process();
  auto base = load_base(args.source);
  if (!base.ok()) {
    std::fprintf(stderr, "oishell: policy: %s\n", policy::format_diagnostics(base.errors).c_str());
    return kExitPolicyInvalid;
  }
  std::vector<policy::Diagnostic> errors;
  policy::apply_overrides(base.policy, args.overrides, context, errors);
  if (!errors.empty()) {
    std::fprintf(stderr, "oishell: policy: %s\n", policy::format_diagnostics(errors).c_str());
    return kExitPolicyInvalid;
  }
  auto base_spec = policy::compile(base.policy, context);
  if (!base_spec.is_ok()) {
    std::fprintf(stderr, "oishell: policy: %s\n", base_spec.status().message().c_str());
    return kExitPolicyInvalid;
  }

  const std::string program = std::filesystem::path(args.command[0]).filename().string();
  LearnEvents events(program);
  std::map<std::tuple<std::string, int, std::string>, uint64_t> seen;  // over every round
  policy::LearnRun run;
  run.extends = extends_value(args.source, output);
  run.command = args.command;
  std::vector<std::string> extra_read_only;
  // The host read-only for the learning runs, when the base takes it (else only what the base shows).
  std::vector<std::string> view = learning_view(*base_spec, context.home);
  {
    PolicyOverrides with_view = args.overrides;
    for (const auto& p : view) with_view.read_only.push_back(p);
    if (!compile_policy(args.source, with_view, context).is_ok()) view.clear();
  }
  std::vector<std::string> scratch_dirs;  // learned write targets: an empty throw-away directory in the next round
  int status = 0;
  for (int round = 1; round <= kRounds; ++round) {
    ConfinedCommand c;
    c.verb = "learn";
    c.source = args.source;
    c.overrides = args.overrides;
    for (const auto& p : view) c.overrides.read_only.push_back(p);
    for (const auto& p : extra_read_only) c.overrides.read_only.push_back(p);
    c.command = args.command;
    c.also_events = &events;
    c.adjust_spec = [&](SandboxSpec& spec) {
      spec.seccomp.observe_paths = true;
      for (const auto& dir : scratch_dirs) {
        MountStep step;
        step.kind = MountStep::Kind::tmpfs;
        step.target = dir;
        spec.mounts.push_back(step);
        spec.landlock.paths.push_back({dir, FsAccess::write});
      }
      if (spec.network.mode == NetMode::proxy) {
        if (args.allow_network) {
          spec.network.allow_all = true;
        } else {
          spec.network.on_unlisted = OnUnlisted::ask;
        }
      }
    };
    std::vector<PathObservation> observed;
    c.before_shutdown = [&](Sandbox& sandbox, int) {
      observed = sandbox.observed_paths();
      ResourcePeaks peaks = sandbox.resource_peaks();
      if (peaks.memory_bytes) run.peak_memory_bytes = std::max(run.peak_memory_bytes.value_or(0), *peaks.memory_bytes);
      if (peaks.processes) run.peak_processes = std::max(run.peak_processes.value_or(0), *peaks.processes);
    };
    status = run_confined(c);
    if (status == kExitPolicyInvalid || (status == kExitSandboxFailed && observed.empty())) return status;
    if (status == 127 && args.command[0].find('/') != std::string::npos) {
      // The command itself was not found inside. Its exec is made by init's spawn, whose memory an unprivileged
      // supervisor may not read (init is not dumpable): the path is the one the user gave.
      const std::string path = std::filesystem::absolute(args.command[0]).lexically_normal().string();
      observed.push_back({path, PathObservation::Mode::exec, "oishell", 1});
    }
    for (const auto& o : observed) seen[{o.path, static_cast<int>(o.mode), o.program}] += o.count;
    // Another round only for a failed run that wanted something it did not get: a path to read that exists (then
    // visible read-only), or a place to write (then an empty directory of the sandbox's own there: the writes
    // succeed and are thrown away with the sandbox; the host's directory is untouched).
    if (status == 0 || round == kRounds) break;
    policy::LearnRun probe_run{run.extends, {}, {}, {}, {}, {}, {}, 0};
    for (const auto& o : observed) probe_run.paths.push_back({host_path(o.path), mode_of(o.mode), o.program, 1});
    auto probe = policy::write_learned_policy(probe_run, *base_spec,
                                              policy::base_facts(base.policy, context, *base_spec), HostFs::real(),
                                              std::nullopt);
    size_t fresh = 0;
    if (probe.is_ok()) {
      for (const auto& p : probe->read_only_paths) {
        if (std::find(extra_read_only.begin(), extra_read_only.end(), p) != extra_read_only.end()) continue;
        extra_read_only.push_back(p);
        ++fresh;
      }
      for (const auto& p : probe->read_write_paths) {
        if (std::find(scratch_dirs.begin(), scratch_dirs.end(), p) != scratch_dirs.end()) continue;
        if (HostFs::real().kind(p) != HostFs::Kind::directory) continue;
        scratch_dirs.push_back(p);
        ++fresh;
      }
    }
    if (fresh == 0) break;
    std::fprintf(stderr, "oishell learn: the run failed (exit %d) and wanted %zu more path(s); running it again with "
                 "them (reads visible, writes to a throw-away directory)\n", status, fresh);
  }
  run.exit_status = status;
  for (const auto& [key, count] : seen) {
    const auto& [path, mode, who] = key;
    run.paths.push_back({host_path(path), mode_of(static_cast<PathObservation::Mode>(mode)), who, count});
  }
  events.add_to(run);

  auto result = policy::write_learned_policy(run, *base_spec, policy::base_facts(base.policy, context, *base_spec),
                                             HostFs::real(), existing);
  if (!result.is_ok()) {
    std::fprintf(stderr, "oishell learn: %s\n", result.status().message().c_str());
    return kExitSandboxFailed;
  }
  if (output.empty()) {
    std::fputs(result->text.c_str(), stdout);
  } else {
    const std::string temp = output + ".learn-tmp";
    {
      std::ofstream out(temp, std::ios::trunc);
      out << result->text;
      if (!out) {
        std::fprintf(stderr, "oishell learn: cannot write %s\n", temp.c_str());
        return kExitSandboxFailed;
      }
    }
    std::error_code ec;
    std::filesystem::rename(temp, output, ec);
    if (ec) {
      std::fprintf(stderr, "oishell learn: cannot write %s: %s\n", output.c_str(), ec.message().c_str());
      return kExitSandboxFailed;
    }
  }
  for (const auto& line : result->added) std::fprintf(stderr, "oishell learn: added %s\n", line.c_str());
  for (const auto& line : result->wanted_not_granted) {
    std::fprintf(stderr, "oishell learn: wanted, not granted: %s\n", line.c_str());
  }
  for (const auto& line : events.not_granted()) {
    std::fprintf(stderr, "oishell learn: wanted, not granted: %s\n", line.c_str());
  }
  if (status != 0) {
    std::fprintf(stderr, "oishell learn: the run failed (exit %d): what it did not reach is not in the policy\n",
                 status);
  }
  if (!output.empty()) {
    std::fprintf(stderr, "oishell learn: %s %s (%zu entries added)\n", widening ? "widened" : "wrote",
                 output.c_str(), result->added.size());
  }
  return kExitOk;
}

const Registration registration{{"learn", "learn the least policy a command needs", &learn, &learn_options,
                                  {completion::Value::command, "command", {}, true}}};

}  // namespace
}  // namespace oishell::cli
