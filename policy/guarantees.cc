// The guarantee table: each promise of a compiled policy and the layers that hold it. The layers, and why each holds
// what it is listed for:
//   mount namespace   a new root with only the policy's paths; system binds read-only, every bind nosuid and nodev,
//                     /proc read-only and noexec, no sysfs; the flags are locked by the user namespace (a nested
//                     namespace cannot clear them) and mount calls are refused by seccomp besides.
//   user namespace    root inside is the caller (or an unused id for a root caller) outside: no capability over
//                     anything of the host's namespaces (mknod, sysctls, other users' files).
//   network namespace the sandbox's own: loopback and the relay's listeners only; abstract unix socket names are
//                     per network namespace.
//   pid namespace     processes outside have no pid inside, so no signal can name them.
//   Landlock          the same rules again by path, port and scope, as far as the ABI in use goes.
//   seccomp           the deny sets (policy/compile.cc); the only layer for the kernel surface they cover.
#include "policy/guarantees.h"

#include <algorithm>

#include "policy/seccomp_sets.h"

namespace oishell {
namespace {

struct LandlockLayer {
  int abi;
  const char* name;
  const char* kernel;  // the first Linux release with that ABI
};

constexpr LandlockLayer kFsRules{3, "Landlock filesystem rules", "Linux 6.2"};  // 3: truncate is covered too
constexpr LandlockLayer kFsReadRules{1, "Landlock filesystem rules", "Linux 5.13"};
constexpr LandlockLayer kTcpRules{4, "Landlock TCP port rules", "Linux 6.7"};
constexpr LandlockLayer kIoctlDev{5, "Landlock device ioctl rules", "Linux 6.10"};
constexpr LandlockLayer kScopes{6, "Landlock scopes", "Linux 6.12"};

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

class Table {
 public:
  Table(const SandboxSpec& spec, const LayerFacts& facts) : facts_(facts) {
    if (auto sets = seccomp_sets::sets_in_effect(spec.seccomp)) sets_ = std::move(*sets);
  }

  GuaranteeState& add(std::string id, std::string statement) {
    out_.push_back(GuaranteeState{std::move(id), std::move(statement), {}, {}});
    return out_.back();
  }
  static void held(GuaranteeState& g, std::string layer, std::string how) {
    g.held_by.push_back(Layer{std::move(layer), std::move(how)});
  }
  void landlock(GuaranteeState& g, const LandlockLayer& layer, std::string how) const {
    if (facts_.landlock_abi >= layer.abi) {
      held(g, std::string(layer.name) + " (from ABI " + std::to_string(layer.abi) + ")", std::move(how));
    } else {
      g.missing.push_back(MissingLayer{layer.name, "Landlock ABI " + std::to_string(layer.abi) + " (" + layer.kernel +
                                                       "); in use: ABI " + std::to_string(facts_.landlock_abi)});
    }
  }
  // The seccomp layer of set `name`, as the program holds it: none when the policy has no such set; waived when
  // allow_syscalls took calls out of it (what remains no longer keeps the promise whole).
  void seccomp(GuaranteeState& g, std::string_view name, std::string how) const {
    const seccomp_sets::SetInEffect* effect = in_effect(name);
    if (effect == nullptr) return;  // not in this policy: not a layer it asked for
    const std::string layer = "seccomp (" + std::string(name) + ")";
    if (!effect->lifted.empty()) {
      g.waived_by.push_back("process.allow_syscalls takes " + join_names(effect->lifted) + " out of the " +
                            std::string(name) + " set");
    } else if (facts_.seccomp_filter) {
      held(g, layer, std::move(how));
    } else {
      g.missing.push_back(MissingLayer{layer, "a kernel with seccomp filters"});
    }
  }
  const seccomp_sets::SetInEffect* in_effect(std::string_view name) const {
    for (const auto& effect : sets_) {
      if (effect.set->name == name) return &effect;
    }
    return nullptr;
  }
  const std::vector<seccomp_sets::SetInEffect>& sets() const { return sets_; }
  std::vector<GuaranteeState> take() { return std::move(out_); }

 private:
  const LayerFacts& facts_;
  std::vector<seccomp_sets::SetInEffect> sets_;  // empty when the spec's seccomp does not compile
  std::vector<GuaranteeState> out_;
};

std::string writable_paths(const SandboxSpec& spec) {
  std::vector<std::string> paths;
  for (const MountStep& m : spec.mounts) {
    if (m.kind == MountStep::Kind::bind_rw && m.source == m.target &&
        std::none_of(paths.begin(), paths.end(), [&](const std::string& p) {
          return m.target.size() > p.size() && m.target.compare(0, p.size(), p) == 0 && m.target[p.size()] == '/';
        })) {
      paths.push_back(m.target);
    }
  }
  if (paths.empty()) return "No host path can be written";
  std::vector<std::string> shown;
  for (size_t i = 0; i < paths.size() && i < 3; ++i) {
    shown.push_back(paths[i] == spec.workspace ? std::string("the workspace") : paths[i]);
  }
  if (paths.size() > 3) shown.push_back(std::to_string(paths.size() - 3) + " more");
  std::string out;
  for (size_t i = 0; i < shown.size(); ++i) out += (i == 0 ? "" : i + 1 == shown.size() ? " and " : ", ") + shown[i];
  return "Only " + out + (paths.size() == 1 ? " is" : " are") + " writable on the host (git metadata and protected "
         "files read-only)";
}

std::string hidden_examples(const SandboxSpec& spec) {
  std::vector<std::string> hidden;
  for (const MountStep& m : spec.mounts) {
    if (m.kind == MountStep::Kind::hide) hidden.push_back(m.target);
  }
  if (hidden.empty()) return "Nothing of the host outside the policy's paths can be read";
  std::string out;
  for (size_t i = 0; i < hidden.size() && i < 3; ++i) out += (i ? ", " : "") + hidden[i];
  if (hidden.size() > 3) out += ", ...";
  return "Hidden paths (" + out + ") cannot be read";
}

}  // namespace

std::vector<GuaranteeState> assess_guarantees(const SandboxSpec& spec, const LayerFacts& facts) {
  Table t(spec, facts);

  auto& write = t.add("fs.write", writable_paths(spec) + ".");
  Table::held(write, "mount namespace", "everything else bound read-only (flags locked) or absent");
  t.landlock(write, kFsRules, "write, create, remove, rename and truncate only beneath the writable paths");

  auto& outside = t.add("fs.outside", "Nothing of the host outside the policy's paths can be read or run.");
  Table::held(outside, "mount namespace", "a new root holding only the policy's paths; the old root detached");
  t.landlock(outside, kFsReadRules, "no access beneath any path without a rule");

  auto& hidden = t.add("fs.hidden", hidden_examples(spec) + ".");
  Table::held(hidden, "mount namespace", "an empty read-only mount over each (locked: it cannot be unmounted)");

  auto& git = t.add("fs.git", "Nothing written inside is run or obeyed by the host's git (config, hooks, ...).");
  Table::held(git, "mount namespace",
              spec.git == GitMode::read_only ? "the workspace's .git bound read-only"
                                             : "what git executes or obeys in the workspace's .git bound read-only");
  Table::held(git, "supervisor", "repositories made or changed inside are neutralised before the host's git reads them");

  auto& setid = t.add("priv.setid", "No set-id or file-capability program gains privileges.");
  Table::held(setid, "mount namespace", "every mount nosuid");
  Table::held(setid, "capabilities", "no_new_privs and no capability in any set");

  // The owner of a file may set its mode: only seccomp keeps a sandbox root started from leaving set-uid-root files.
  auto& setid_files = t.add("fs.setid", "No file with a set-user-ID or set-group-ID bit can be made (none is left "
                                        "on the host).");
  t.seccomp(setid_files, "setid_files", "chmod and creation modes with set-id bits refused");

  auto& priv = t.add("priv.host", "Code inside has no privilege over the host's files, kernel settings or devices.");
  Table::held(priv, "user namespace", "root inside is an unprivileged id outside");
  Table::held(priv, "mount namespace", "/proc read-only, no sysfs, every other mount nodev");
  t.landlock(priv, kFsReadRules, "/proc readable only; no device node can be made");

  auto& net = t.add("net.exit", spec.network.mode == NetMode::proxy
                                    ? "No connection leaves the sandbox except through oishell's relay, which decides "
                                      "each destination."
                                    : "No connection leaves the sandbox.");
  Table::held(net, "network namespace", spec.network.mode == NetMode::proxy
                                            ? "the sandbox's own: loopback and the relay's listeners only"
                                            : "the sandbox's own: loopback only");
  t.landlock(net, kTcpRules, spec.network.mode == NetMode::proxy ? "TCP connect only to the relay's ports, no bind"
                                                                 : "no TCP connect or bind");

  auto& abstract = t.add("ipc.abstract", "No abstract unix socket outside the sandbox can be reached (D-Bus, X11, "
                                         "...).");
  Table::held(abstract, "network namespace", "abstract socket names are per network namespace");
  if (spec.landlock.scope_abstract_unix) t.landlock(abstract, kScopes, "abstract sockets scoped to the sandbox");

  auto& signal = t.add("ipc.signal", "No signal reaches a process outside the sandbox.");
  Table::held(signal, "pid namespace", "processes outside have no pid inside");
  if (spec.landlock.scope_signal) t.landlock(signal, kScopes, "signals scoped to the sandbox");

  auto& sysv = t.add("ipc.sysv", "The host's SysV IPC objects and POSIX message queues cannot be reached.");
  Table::held(sysv, "ipc namespace", "the sandbox's own");

  auto& dev = t.add("dev", "No device beyond the minimal /dev (null, zero, full, random, urandom, tty, its own "
                           "terminals, shm) can be opened; no terminal ioctl injects input or loads a line discipline.");
  Table::held(dev, "mount namespace", "/dev holds only those; every other mount is nodev");
  t.seccomp(dev, "terminal_injection", "TIOCSTI, TIOCLINUX and TIOCSETD refused");
  t.landlock(dev, kIoctlDev, "device ioctls only beneath /dev");

  auto& sockets = t.add("net.sockets", "No raw, packet, vsock or other exotic socket can be made, nor netlink "
                                       "other than route's.");
  t.seccomp(sockets, "sockets", "socket and socketpair refused for those families, types and protocols");

  // io_uring's rings make calls inside the kernel, where no filter sees them: every seccomp layer above rests on it.
  auto& sight = t.add("seccomp.sight", "Every system call of the sandbox passes its seccomp filter (no io_uring "
                                       "ring makes calls out of its sight).");
  t.seccomp(sight, "io_uring", "io_uring_setup, io_uring_enter and io_uring_register refused");

  // The sets as the program holds them; a set some calls were taken out of is named with what it lost.
  std::string sets, lifted;
  for (const auto& effect : t.sets()) {
    sets += (sets.empty() ? "" : ", ") + std::string(effect.set->name);
    if (!effect.lifted.empty()) {
      lifted += (lifted.empty() ? "" : "; ") + join_names(effect.lifted) + " from " + std::string(effect.set->name);
    }
  }
  auto& kernel = t.add("kernel", "The kernel interfaces of the policy's deny sets (" + sets + ") cannot be used" +
                                     (lifted.empty() ? "" : ", but for what process.allow_syscalls takes out (" +
                                                                lifted + ")") + ".");
  if (t.sets().empty()) {
    kernel.missing.push_back(MissingLayer{"seccomp", "a seccomp program this policy can compile"});
  } else if (facts.seccomp_filter) {
    Table::held(kernel, "seccomp", "those system calls refused, or the process killed");
  } else {
    kernel.missing.push_back(MissingLayer{"seccomp", "a kernel with seccomp filters (CONFIG_SECCOMP_FILTER)"});
  }
  return t.take();
}

std::string refusal(const std::vector<GuaranteeState>& guarantees) {
  std::string out;
  for (const auto& g : guarantees) {
    if (g.held() || !g.waived_by.empty()) continue;  // a waiver is the policy's, not a kernel's to give
    std::string needs;
    for (const auto& m : g.missing) needs += (needs.empty() ? "" : ", or ") + m.name + ": " + m.needs;
    out += (out.empty() ? "" : "; ") + g.id + " (" + g.statement + ") would be held by no layer here; it needs " +
           (needs.empty() ? std::string("a layer this kernel lacks") : needs);
  }
  if (out.empty()) return out;
  return "landlock (required): " + out +
         ". Options: run on a kernel with that feature, or set `landlock: best_effort` in the policy to run without "
         "it (`oishell doctor` shows what holds each guarantee here)";
}

std::vector<std::string> fewer_layers(const std::vector<GuaranteeState>& guarantees) {
  std::vector<std::string> out;
  for (const auto& g : guarantees) {
    if (g.missing.empty()) continue;
    std::string held, missing;
    for (const auto& l : g.held_by) held += (held.empty() ? "" : ", ") + l.name;
    for (const auto& m : g.missing) missing += (missing.empty() ? "" : ", ") + m.name + " (needs " + m.needs + ")";
    out.push_back(g.id + ": " + (held.empty() ? std::string("held by NO layer") : "held by " + held) + "; not by " +
                  missing);
  }
  return out;
}

std::string describe_landlock(const LayerFacts& facts) {
  std::string abi = facts.landlock_abi == 0 ? std::string("none") : "ABI " + std::to_string(facts.landlock_abi);
  if (facts.landlock_cap && *facts.landlock_cap < facts.landlock_kernel_abi) {
    return abi + " (capped by OISHELL_LANDLOCK_ABI=" + std::to_string(*facts.landlock_cap) + "; the kernel has ABI " +
           std::to_string(facts.landlock_kernel_abi) + ")";
  }
  if (facts.landlock_abi > kLandlockAbiKnown) {
    // A newer kernel (Debian's development suite had ABI 10 in 2026): its ruleset is made with the rights and flags
    // of the newest ABI this oishell knows; what the ABIs after it add is not used.
    return abi + " (the kernel's; oishell uses ABI " + std::to_string(kLandlockAbiKnown) +
           "'s rights, the newest it knows)";
  }
  return abi + (facts.landlock_abi == 0 ? " (the kernel has no Landlock, or it is disabled)" : " (the kernel's)");
}

}  // namespace oishell
