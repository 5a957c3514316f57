// The sealing orchestrator: each step is a call into the file that owns the subsystem.
#include "runtime/inside/init.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/startup_trace.h"
#include "runtime/inside/caps.h"
#include "runtime/control_protocol.h"
#include "runtime/fd_passing.h"
#include "runtime/init_spec_codec.h"
#include "runtime/inside/init_loop.h"
#include "runtime/inside/landlock.h"
#include "runtime/outside/limits.h"
#include "runtime/inside/mount_plan.h"
#include "runtime/inside/netns.h"
#include "runtime/inside/process_spawn.h"
#include "runtime/inside/seccomp.h"
#include "runtime/sys/syscalls.h"
#include "runtime/inside/userns.h"

extern char** environ;

namespace oishell {
namespace {

constexpr int kControlFd = 3;  // where the control socket lives once the fds are tidied

int g_control = -1;

// Reports the failed step to the supervisor and dies. The supervisor turns it into create()'s error.
[[noreturn]] void fail(const char* step, const Status& status) {
  control::ControlMessage m;
  m.kind = control::Kind::fail;
  m.step = step;
  m.message = status.message();
  if (!send_message(g_control, control::encode(m)).is_ok()) {
    dprintf(2, "oishell: sandbox init: %s: %s\n", step, status.message().c_str());
  }
  _exit(1);
}

void check(const char* step, const Status& status) {
  if (!status.is_ok()) fail(step, status);
}

Status errno_status(int rc, const char* call) { return rc == 0 ? Status::ok() : Status::from_errno(errno, call); }

// The host environment (with any credentials in it) was copied into this process by clone. Wipe the strings so
// not even a memory read of init could find them, and leave an empty environment.
void scrub_inherited_environment() {
  for (char** e = environ; e && *e; ++e) std::memset(*e, 0, std::strlen(*e));
  static char* empty[] = {nullptr};
  environ = empty;
}

// `spec`: the part of the compiled policy init applies (runtime/init_spec_codec.h); for a root caller, with the
// trees of the policy's binds, id-mapped where written (runtime/outside/idmapped_binds.h).
Result<SandboxSpec> wait_for_spec(std::vector<UniqueFd>* idmapped) {
  auto message = receive_message(g_control);
  if (!message.is_ok()) return message.status();
  if (message->payload.empty()) _exit(0);  // the supervisor is gone (e.g. the policy did not compile)
  auto decoded = control::decode(message->payload);
  if (!decoded.is_ok()) return decoded.status();
  if (decoded->kind != control::Kind::spec) return Status::error("expected `spec` from the supervisor");
  if (message->fds.size() != static_cast<size_t>(decoded->number)) {
    return Status::error("`spec`: " + std::to_string(message->fds.size()) + " descriptors, expected " +
                         std::to_string(decoded->number));
  }
  *idmapped = std::move(message->fds);
  return decode_init_spec(decoded->data);
}

// "RESOURCE SOFT HARD", three decimal numbers and nothing else.
bool parse_rlimit_setting(std::string_view text, RlimitSetting* out) {
  const char* at = text.data();
  const char* end = text.data() + text.size();
  auto number = [&](auto* value, bool last) {
    auto [next, err] = std::from_chars(at, end, *value);
    if (err != std::errc() || (last ? next != end : next == end || *next != ' ')) return false;
    at = next + (last ? 0 : 1);
    return true;
  };
  return number(&out->resource, false) && number(&out->soft, false) && number(&out->hard, true);
}

struct Joined {
  SeccompProgram seccomp;
  std::vector<RlimitSetting> rlimits;
};

// `joined`: init is in the limits' cgroups; the seccomp program and the rlimits prepared meanwhile come with it.
Result<Joined> wait_for_joined() {
  auto message = receive_message(g_control);
  if (!message.is_ok()) return message.status();
  if (message->payload.empty()) _exit(0);  // the supervisor is gone
  auto decoded = control::decode(message->payload);
  if (!decoded.is_ok()) return decoded.status();
  if (decoded->kind != control::Kind::joined) return Status::error("expected `joined` from the supervisor");
  Joined joined;
  auto program = seccomp_program_from_bytes(decoded->data, decoded->number == 1);
  if (!program.is_ok()) return program.status();
  joined.seccomp = std::move(program.value());
  for (const std::string& text : decoded->strings) {
    RlimitSetting r;
    if (!parse_rlimit_setting(text, &r)) return Status::error("`joined`: malformed rlimit `" + text + "`");
    joined.rlimits.push_back(r);
  }
  return joined;
}

// The sandbox's network and user namespaces, for the connect broker (runtime/broker): the supervisor may not open
// them through /proc/<init>/ns (init is not dumpable), and needs them to tell the sandbox's sockets apart. And its
// mount namespace, which the supervisor holds so that the kernel tears it down when the last reference goes (the
// cgroup janitor's, runtime/outside/cgroup_janitor.h), and not inside init's exit, which the supervisor waits for.
struct OwnNamespaces {
  UniqueFd net, user, mnt;
};

Result<OwnNamespaces> open_own_namespaces() {
  OwnNamespaces ns;
  ns.net.reset(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
  ns.user.reset(::open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC));
  ns.mnt.reset(::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
  if (!ns.net || !ns.user || !ns.mnt) return Status::from_errno(errno, "open(/proc/self/ns/{net,user,mnt})");
  return ns;
}

// The relay's listeners, the DNS stub's and the datagram relay's sockets, each fd named by its protocol: "http",
// "socks5", "dns-udp", "dns-tcp", "udp-relay"; then the namespaces ("ns-net", "ns-user", "ns-mnt") and init's root
// ("root").
Status pass_listeners(const NetworkSpec& network, OwnNamespaces namespaces, std::vector<std::string>* degraded) {
  auto listeners = open_relay_listeners(network, degraded);
  if (!listeners.is_ok()) return listeners.status();
  auto dns = open_dns_sockets(network, degraded);
  if (!dns.is_ok()) return dns.status();
  auto datagrams = open_datagram_relay_sockets(network, degraded);
  if (!datagrams.is_ok()) return datagrams.status();
  control::ControlMessage m;
  m.kind = control::Kind::listeners;
  std::vector<int> fds;
  for (const auto& l : *listeners) {
    fds.push_back(l.fd.get());
    m.strings.push_back(l.protocol == relay::Protocol::http ? "http" : "socks5");
  }
  for (const auto& fd : dns->udp) {
    fds.push_back(fd.get());
    m.strings.push_back("dns-udp");
  }
  for (const auto& fd : dns->tcp) {
    fds.push_back(fd.get());
    m.strings.push_back("dns-tcp");
  }
  for (const auto& fd : *datagrams) {
    fds.push_back(fd.get());
    m.strings.push_back("udp-relay");
  }
  fds.push_back(namespaces.net.get());
  m.strings.push_back("ns-net");
  fds.push_back(namespaces.user.get());
  m.strings.push_back("ns-user");
  fds.push_back(namespaces.mnt.get());
  m.strings.push_back("ns-mnt");
  // And init's root, the mount tree built (the broker finds the sandbox's own tmpfs beneath it: never through a
  // caller's root, which a caller may have changed).
  UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return Status::from_errno(errno, "open(\"/\", O_PATH)");
  fds.push_back(root.get());
  m.strings.push_back("root");
  return send_message(g_control, control::encode(m), fds);  // init's copies close on return
}

// Stdio stays (it is what the supervisor gave; spawned processes get their own), the control socket moves to
// fd 3, everything else is closed.
Status tidy_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0) {
      int null_fd = ::open("/dev/null", O_RDWR);  // lowest free number: fd itself
      if (null_fd < 0) return Status::from_errno(errno, "open(\"/dev/null\")");
    }
  }
  if (g_control != kControlFd) {
    if (::dup3(g_control, kControlFd, O_CLOEXEC) < 0) return Status::from_errno(errno, "dup3(control, 3)");
    g_control = kControlFd;
  }
  return errno_status(sys::close_range(kControlFd + 1, ~0U, 0), "close_range(4, ~0)");
}

}  // namespace

[[noreturn]] void run_sandbox_init(const InitArgs& args) {
  // Before anything else: die with the supervisor (PDEATHSIG fires when the thread that cloned us exits).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::prctl(PR_SET_NAME, "oishell-init");  // in ps and in profiles, apart from the supervisor
  // F_DUPFD moves the socket above stdio even if the supervisor had some of 0..2 closed.
  g_control = ::fcntl(args.control_fd, F_DUPFD_CLOEXEC, kControlFd + 1);
  if (g_control < 0) _exit(1);
  ::close(args.control_fd);
  scrub_inherited_environment();
  // No handler of the supervisor's survives in init, and nothing it ignored: runtime/inside/process_spawn.h.
  check("signal dispositions", reset_signal_dispositions());
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  // 1. uid/gid maps: the supervisor's ids mapped to themselves; a root caller's are written by the supervisor.
  if (!args.root_caller) check("uid/gid maps", write_own_id_maps(args.uid, args.gid));
  // Only now (/proc/self/uid_map had to be opened): make /proc/1/* (environ, mem, root, cwd, fd) inaccessible to
  // the sandboxed processes.
  check("non-dumpable", errno_status(::prctl(PR_SET_DUMPABLE, 0), "prctl(PR_SET_DUMPABLE, 0)"));
  // The rest of the namespaces, while the supervisor still compiles the policy (init_process.cc says why here).
  check("namespaces", errno_status(::unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
                                   "unshare(CLONE_NEWNET|CLONE_NEWIPC|CLONE_NEWUTS)"));
  // What needs no policy, while the supervisor still compiles it: `lo` up, the namespaces' fds.
  check("network namespace", bring_up_loopback());
  auto namespaces = open_own_namespaces();
  if (!namespaces.is_ok()) fail("namespace fds", namespaces.status());
  trace_startup("init: ids mapped");
  std::vector<UniqueFd> idmapped;
  auto received = wait_for_spec(&idmapped);
  if (!received.is_ok()) fail("receiving the policy", received.status());
  const SandboxSpec& spec = *received;
  trace_startup("init: policy received");
  // The supervisor wrote a root caller's maps before it sent `spec`.
  if (args.root_caller) check("uid/gid maps", become_namespace_root());
  // 2. Mount namespace: the policy's tree on a new root.
  std::vector<std::string> degraded;
  check("mount namespace", apply_mount_plan(spec, std::move(idmapped), &degraded));
  trace_startup("init: mounts built");
  check("uts namespace", errno_status(::sethostname(spec.hostname.data(), spec.hostname.size()), "sethostname"));
  // 3. Network namespace: loopback up, relay listeners and DNS stub sockets handed to the supervisor.
  if (spec.network.mode == NetMode::none) check("network namespace", remove_second_loopback_address());
  check("relay listeners", pass_listeners(spec.network, std::move(namespaces.value()), &degraded));
  trace_startup("init: network up");
  // 4. A new session (no controlling terminal of the host), no inherited fds.
  check("setsid", ::setsid() < 0 ? Status::from_errno(errno, "setsid") : Status::ok());
  check("closing inherited fds", tidy_fds());
  // The supervisor has put us in the limits' cgroups meanwhile; our cgroup namespace is rooted there.
  auto joined = wait_for_joined();
  if (!joined.is_ok()) fail("waiting for the cgroup and the seccomp program", joined.status());
  check("cgroup namespace", errno_status(::unshare(CLONE_NEWCGROUP), "unshare(CLONE_NEWCGROUP)"));
  // 5. Landlock.
  LandlockReport landlock;
  check("landlock", landlock_apply(spec.landlock, &landlock));
  degraded.insert(degraded.end(), landlock.degraded.begin(), landlock.degraded.end());
  // The container's /proc (own_proc: best_effort) lists the container's other processes: Landlock's ptrace scope is
  // what keeps their memory, environment and files closed to the sandbox (they run as the same user). Without it,
  // no sandbox rather than that.
  if (landlock.abi == 0 && std::find(degraded.begin(), degraded.end(), kSharedProcLoss) != degraded.end()) {
    fail("proc", Status::error("the container masks /proc and Landlock is off, so the container's /proc "
                               "(process.own_proc: best_effort) would open its other processes' memory and "
                               "environment to the sandbox: unmask /proc (Kubernetes procMount: Unmasked; podman "
                               "--security-opt unmask=ALL) or run where Landlock is on"));
  }
  // 6. Capabilities, securebits, no_new_privs.
  check("capabilities", drop_all_capabilities());
  // 7. seccomp; the notify fd goes to the supervisor before init serves anything.
  auto notify_fd = seccomp_load_program(joined->seccomp);
  if (!notify_fd.is_ok()) fail("seccomp", notify_fd.status());
  // 8. Resource limits that cgroups did not cover.
  check("resource limits", apply_rlimit_settings(joined->rlimits));
  trace_startup("init: sealed");
  // 9. Every CPU the caller had, for init and all it starts (InitProcess ran it beside the supervisor until now).
  if (args.restore_cpus && ::sched_setaffinity(0, sizeof args.cpus, &args.cpus) != 0) {
    degraded.push_back("cpus: the sandbox could not take back the caller's CPU set (" + errno_text(errno) +
                       "); it runs on the CPUs the set-up used");
  }

  control::ControlMessage ready;
  ready.kind = control::Kind::ready;
  ready.number = landlock.abi;
  ready.strings = degraded;
  std::vector<int> fds;
  if (notify_fd->valid()) fds.push_back(notify_fd->get());
  check("reporting ready", send_message(g_control, control::encode(ready), fds));
  notify_fd->reset();
  run_init_loop(g_control);
}

}  // namespace oishell
