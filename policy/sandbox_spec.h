#pragma once
// SandboxSpec: the compiled policy. Plain data that runtime/ consumes; runtime/ never reads YAML.
// Produced by policy::compile() (policy/compile.h). Every path here is absolute, normalised (no `..`, no trailing
// slash) and, where it exists on the host, symlink-resolved at compile time.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/net_rules.h"

namespace oishell {

// One step of the mount plan, applied in order on the new tmpfs root.
struct MountStep {
  enum class Kind {
    bind_ro,   // host `source` bound read-only at `target`
    bind_rw,   // host `source` bound read-write at `target`
    tmpfs,     // an empty directory of the sandbox's one scratch tmpfs at `target` (mode 0755; /tmp 01777); /tmp,
               // the home and /dev/shm share that tmpfs, 3/4 of the memory limit (runtime/inside/mount_plan.h)
    proc,      // fresh procfs of the sandbox's pid namespace at `target`; with a `source` (`process.own_proc:
               // best_effort`), that host procfs bound read-only where the kernel refuses a fresh one (EPERM: a
               // container that masks its /proc), reported as degraded (runtime/inside/mount_plan.h)
    dev,       // minimal /dev at `target`: null zero full random urandom tty, devpts (ptmx), shm
    hide,      // `target` made absent: an empty read-only tmpfs on a dir, /dev/null-less empty file on a file
    protect,   // `target` (inside a writable bind) re-bound read-only over itself
    symlink,   // a symlink at `target` whose contents are `source` (e.g. /bin -> usr/bin on merged-/usr hosts)
    file,      // a read-only file of the sandbox's own holding `source` (the text), bound over `target`: an existing
               // file, or a symlink, which is covered and not followed (e.g. /etc/resolv.conf -> ../run/...);
               // a missing target is skipped when `optional`, otherwise an error (runtime/inside/mount_plan.cc)
  };
  Kind kind = Kind::bind_ro;
  std::string source;     // host path (bind kinds); the link's contents (symlink); empty otherwise
  std::string target;     // path inside the sandbox
  bool optional = false;  // a missing source is skipped (system dirs like /lib64), otherwise an error
  bool system = false;    // a system directory (policy/compiler.h system_dirs()): for a root caller, bound by init
                          // itself and never id-mapped, so root-only files in it stay unreadable inside (as in
                          // every read-only bind not inside a writable one: runtime/outside/idmapped_binds.h)
};

// Landlock filesystem rights, by intent; runtime/inside/landlock maps them to the ABI's bits.
enum class FsAccess {
  read,        // read files, list dirs
  read_exec,   // read + execute
  write,       // read_exec + write + create + remove + rename (refer) + truncate; not ioctl_dev (runtime/inside/landlock.cc)
  dev,         // read + write + truncate + ioctl_dev + regular files made/removed (/dev/shm), for /dev; no exec
};

struct LandlockPathRule {
  std::string path;  // inside the sandbox (after pivot_root)
  FsAccess access = FsAccess::read;
};

struct LandlockSpec {
  // true: every guarantee must be held by at least one layer (policy/guarantees.h), or the sandbox refuses to
  // start; false: best effort, report what is lost. Landlock's own missing rights are never an error by themselves.
  bool required = true;
  // The highest Landlock ABI asked of the kernel: set by the supervisor from OISHELL_LANDLOCK_ABI in its own
  // environment (runtime/inside/landlock.h); -1: whatever the kernel offers.
  int abi_limit = -1;
  std::vector<LandlockPathRule> paths;
  std::vector<uint16_t> tcp_connect_ports;  // the relay's ports (3128, 1080) in proxy mode; empty = no connect
  std::vector<uint16_t> tcp_bind_ports;     // empty = no bind
  bool scope_abstract_unix = true;
  bool scope_signal = true;
};

enum class SeccompLevel { default_level, strict };

struct SeccompSpec {
  SeccompLevel level = SeccompLevel::default_level;
  // Deny sets by purpose, e.g. "mount_and_pivot", "namespaces", "kernel_modules", "kexec", "keyring",
  // "bpf_and_perf", "tracing", "userfaultfd", "io_uring", "handles", "terminal_injection", "sockets",
  // "clock_and_admin", "setid_files", "personality"; strict adds "strict_extras". Names are defined in
  // policy/seccomp_sets.
  std::vector<std::string> deny_sets;
  std::vector<std::string> allow_syscalls;  // removed from the deny sets
  bool nested_namespaces = false;
  // `oishell learn`: the calls that name a path (open, exec, create, remove, rename...) are shown to the supervisor,
  // which records the path and lets the call through unchanged (runtime/outside/path_observer.h). Not a policy key.
  bool observe_paths = false;
};

enum class NetMode { none, proxy };
enum class OnUnlisted { deny, ask };

struct NetworkSpec {
  NetMode mode = NetMode::proxy;
  bool allow_all = false;           // every public destination allowed (private still guarded)
  std::vector<HostRule> allow;
  std::vector<HostRule> deny;       // always wins over allow
  std::vector<Cidr> allow_private;  // exempt from the private-address guard
  std::map<std::string, std::string> hosts;  // pinned resolution: normalised name -> IP literal
  OnUnlisted on_unlisted = OnUnlisted::deny;
  uint16_t http_proxy_port = 3128;
  uint16_t socks_proxy_port = 1080;
  // The DNS stub inside (proxy mode): 127.0.0.1 and ::1 on this port, /etc/resolv.conf pointing at it.
  uint16_t dns_port = 53;
  // Whether init makes the datagram relay's sockets: some allow rule has `protocol: udp`. Init's copy of the spec
  // (runtime/init_spec_codec.h) carries this instead of the rules; the policy's side reads the rules themselves.
  bool datagram_relay = false;
  // `network.unix`: pathname sockets outside the sandbox's own tmpfs that may be connected to (host paths,
  // absolute, normalised). Every other such connect is refused by the broker (runtime/broker).
  std::vector<std::string> unix_sockets;
  // The addresses of the machine the relay runs on: refused by the private-address guard unless allow_private
  // covers them. Filled by the runtime when the relay is created (runtime/relay/host_addresses.h), not by the
  // compiler: not part of the policy, its JSON or its golden files. Tests inject their own.
  std::vector<IpAddress> host_addresses;
};

struct LimitsSpec {
  std::optional<uint64_t> memory_bytes;
  std::optional<uint64_t> pids;
  std::optional<uint64_t> cpu_time_seconds;
  std::optional<uint64_t> wall_time_ms;
  std::optional<uint64_t> file_size_bytes;
  std::optional<uint64_t> open_files;
};

enum class HomeMode { tmpfs, workspace, none };

// The workspace's git metadata inside. Whatever the mode, repositories created or changed during the run are
// neutralised before the host's git can read them (runtime/outside/repo_guard.h).
enum class GitMode {
  read_only,  // `.git` (directory or file, and the git dir it names when that is writable) bound read-only
  commit,     // objects, refs, logs, index, HEAD writable; what git executes or obeys (config, hooks, info,
              // commondir, worktrees, modules, ...) read-only where it exists
};

struct SandboxSpec {
  int version = 1;
  std::string workspace;          // host path, bound read-write (read-only when the policy says so)
  bool workspace_read_only = false;
  std::string cwd;                // inside the sandbox; the workspace path by default
  HomeMode home = HomeMode::tmpfs;
  std::string home_path;          // $HOME inside the sandbox
  // Set when the host's home directory (`home_exposed`) lies inside a writable bind (allow_home_workspace): its
  // dotfiles and ~/bin are read-only inside, its other entries as writable as the bind.
  std::string home_exposed;
  GitMode git = GitMode::read_only;
  std::vector<MountStep> mounts;  // the whole mount plan, in order (hide and protect steps included)
  // Host paths of every `protect` entry inside a writable bind, existing at compile time or not (lexical and
  // resolved): watched for changes, which are reported at exit. Only the existing ones also get a protect step.
  std::vector<std::string> protected_paths;
  LandlockSpec landlock;
  SeccompSpec seccomp;
  NetworkSpec network;
  LimitsSpec limits;
  // The whole environment inside, in order. Built from env.pass (values taken from the compile context) and env.set,
  // plus HOME, PWD, the proxy variables in proxy mode. Nothing else of the host environment enters.
  std::vector<std::pair<std::string, std::string>> env;
  std::string hostname = "oishell";
};

}  // namespace oishell
