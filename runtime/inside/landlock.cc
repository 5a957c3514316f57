// Landlock: best-effort (or required) ABI negotiation in the manner of the kernel's samples/landlock/sandboxer.c.
//
// FsAccess -> Landlock rights (masked by what the kernel's ABI handles):
//   read       READ_FILE | READ_DIR
//   read_exec  read | EXECUTE
//   write      read_exec | WRITE_FILE | TRUNCATE | REMOVE_* | MAKE_* (reg, dir, sym, sock, fifo) | REFER.
//              Not MAKE_CHAR / MAKE_BLOCK (device nodes are never created in a sandbox) and not IOCTL_DEV: device
//              files live under /dev, which gets `dev`; a device node reached through a writable path (e.g. a bind
//              that happens to contain one) gets no ioctls beyond the few Landlock always allows.
//   dev        READ_FILE | READ_DIR | WRITE_FILE | TRUNCATE | IOCTL_DEV (terminal ioctls on /dev/tty, /dev/pts/*)
//              | MAKE_REG | REMOVE_FILE (POSIX shared memory and semaphores: shm_open/sem_open in /dev/shm).
// Rights a directory-only access would carry are removed for a rule on a file (the kernel refuses them).
// LANDLOCK_RESTRICT_SELF flags of ABI 7 only tune audit logging; they are not used (the default logs denials of
// this domain when audit is on, which is what an administrator wants).
#include "runtime/inside/landlock.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "base/unique_fd.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

constexpr uint64_t kRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t kReadExec = kRead | LANDLOCK_ACCESS_FS_EXECUTE;
constexpr uint64_t kWrite = kReadExec | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                            LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                            LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                            LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER;
constexpr uint64_t kDev = kRead | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                          LANDLOCK_ACCESS_FS_IOCTL_DEV | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REMOVE_FILE;
// Rights that make sense on a file (not only on a directory).
constexpr uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                 LANDLOCK_ACCESS_FS_IOCTL_DEV | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REMOVE_FILE;

// Everything ABI 1 handles (MAKE_CHAR/BLOCK are handled, hence denied everywhere, though no rule grants them).
constexpr uint64_t kAbi1Fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;

uint64_t rights_of(FsAccess access) {
  switch (access) {
    case FsAccess::read: return kRead;
    case FsAccess::read_exec: return kReadExec;
    case FsAccess::write: return kWrite;
    case FsAccess::dev: return kDev;
  }
  return kRead;
}

const char* access_name(FsAccess access) {
  switch (access) {
    case FsAccess::read: return "read";
    case FsAccess::read_exec: return "read_exec";
    case FsAccess::write: return "write";
    case FsAccess::dev: return "dev";
  }
  return "?";
}

// One feature the spec asks for, the ABI that brings it, and the layer that still holds what it would add.
struct Feature {
  const char* right;
  int abi;
  const char* still_held_by;
};

// Records a feature the ABI in use lacks: one layer fewer for a guarantee (policy/guarantees.h), never an error.
void missing(int abi, const Feature& f, LandlockReport* report) {
  report->degraded.push_back(std::string("landlock: ") + f.right + " not installed (needs ABI " +
                             std::to_string(f.abi) + ", in use: ABI " + std::to_string(abi) + "); " +
                             f.still_held_by);
}

Status add_path_rule(int ruleset, const LandlockPathRule& rule, uint64_t handled, LandlockReport* report) {
  UniqueFd fd(::open(rule.path.c_str(), O_PATH | O_CLOEXEC));
  if (!fd) {
    int err = errno;
    if (err == ENOENT) {
      report->skipped.push_back(rule.path + " (" + access_name(rule.access) + "): does not exist, no rule added");
      return Status::ok();
    }
    return Status::from_errno(err, "open(\"" + rule.path + "\", O_PATH)").with_context("landlock rule");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Status::from_errno(errno, "fstat(\"" + rule.path + "\")").with_context("landlock rule");
  }
  uint64_t allowed = rights_of(rule.access) & handled;
  if (!S_ISDIR(st.st_mode)) allowed &= kFileRights;
  if (allowed == 0) return Status::ok();
  sys::LandlockPathBeneathAttr attr{allowed, fd.get()};
  if (sys::landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0) {
    return Status::from_errno(errno, "landlock_add_rule(\"" + rule.path + "\", " + access_name(rule.access) + ")");
  }
  return Status::ok();
}

Status add_port_rule(int ruleset, uint64_t access, uint16_t port, const char* what) {
  sys::LandlockNetPortAttr attr{access, port};
  if (sys::landlock_add_rule(ruleset, LANDLOCK_RULE_NET_PORT, &attr, 0) != 0) {
    return Status::from_errno(errno, std::string("landlock_add_rule(") + what + " port " + std::to_string(port) + ")");
  }
  return Status::ok();
}

}  // namespace

int landlock_abi_version() {
  int abi = sys::landlock_create_ruleset(nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : abi;
}

Result<std::optional<int>> landlock_abi_cap() {
  const char* text = ::getenv("OISHELL_LANDLOCK_ABI");
  if (text == nullptr) return std::optional<int>();
  if (text[0] >= '0' && text[0] <= '7' && text[1] == '\0') return std::optional<int>(text[0] - '0');
  return Status::error(std::string("OISHELL_LANDLOCK_ABI=") + text +
                       ": not a Landlock ABI from 0 to 7 (unset it to use the kernel's)");
}

int landlock_abi_in_use(int kernel_abi, int limit) { return limit < 0 ? kernel_abi : std::min(kernel_abi, limit); }

Result<LandlockHandled> landlock_negotiate(const LandlockSpec& spec, int abi, LandlockReport* report) {
  LandlockReport local;
  if (report == nullptr) report = &local;
  LandlockHandled attr;
  attr.fs = kAbi1Fs;
  if (abi >= 2) {
    attr.fs |= LANDLOCK_ACCESS_FS_REFER;
  } else {
    // Without refer, ABI 1 denies every cross-directory rename and link: stricter, not weaker.
    report->degraded.push_back("landlock: refer not available (ABI 1): renaming or linking across directories is "
                               "always denied, even where writable");
  }
  if (abi >= 3) {
    attr.fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
  } else {
    missing(abi, {"truncate right", 3, "read-only mounts still refuse truncating outside the writable paths"},
            report);
  }
  if (abi >= 5) {
    attr.fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  } else {
    missing(abi, {"device ioctl rules", 5, "the minimal /dev, nodev mounts and seccomp still hold the devices"},
            report);
  }
  if (abi >= 4) {
    attr.net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
  } else {
    missing(abi, {"TCP port rules", 4, "the network namespace is still the only way out"}, report);
  }
  if (spec.scope_abstract_unix) {
    if (abi >= 6) {
      attr.scoped |= LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
    } else {
      missing(abi, {"abstract unix socket scope", 6, "the network namespace still keeps outside sockets apart"},
              report);
    }
  }
  if (spec.scope_signal) {
    if (abi >= 6) {
      attr.scoped |= LANDLOCK_SCOPE_SIGNAL;
    } else {
      missing(abi, {"signal scope", 6, "the pid namespace still keeps outside processes apart"}, report);
    }
  }
  return attr;
}

Status landlock_apply(const LandlockSpec& spec, LandlockReport* report) {
  LandlockReport local;
  if (report == nullptr) report = &local;
  report->kernel_abi = landlock_abi_version();
  const int err = errno;
  const int abi = landlock_abi_in_use(report->kernel_abi, spec.abi_limit);
  report->abi = abi;
  if (abi <= 0) {
    std::string why = report->kernel_abi > 0 ? "capped at ABI 0 (OISHELL_LANDLOCK_ABI=0)"
                      : err == EOPNOTSUPP    ? "Landlock is disabled at boot (lsm= does not list landlock)"
                                             : "the kernel has no Landlock (" + errno_text(err) + ")";
    report->degraded.push_back("landlock: no rules installed: " + why +
                               "; the mount, network and pid namespaces and seccomp still hold every guarantee");
    return Status::ok();
  }

  auto handled = landlock_negotiate(spec, abi, report);
  if (!handled) return handled.status();
  sys::LandlockRulesetAttr attr;
  attr.handled_access_fs = handled->fs;
  attr.handled_access_net = handled->net;
  attr.scoped = handled->scoped;

  // The attribute grew with the ABI: fs only (ABI 1-3), + net (ABI 4-5), + scoped (ABI 6+).
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? offsetof(sys::LandlockRulesetAttr, scoped)
                                                  : offsetof(sys::LandlockRulesetAttr, handled_access_net);
  UniqueFd ruleset(sys::landlock_create_ruleset(&attr, size, 0));
  if (!ruleset) return Status::from_errno(errno, "landlock_create_ruleset(ABI " + std::to_string(abi) + ")");

  for (const auto& rule : spec.paths) OI_TRY(add_path_rule(ruleset.get(), rule, attr.handled_access_fs, report));
  if (attr.handled_access_net != 0) {
    for (uint16_t port : spec.tcp_connect_ports) {
      OI_TRY(add_port_rule(ruleset.get(), LANDLOCK_ACCESS_NET_CONNECT_TCP, port, "connect"));
    }
    for (uint16_t port : spec.tcp_bind_ports) {
      OI_TRY(add_port_rule(ruleset.get(), LANDLOCK_ACCESS_NET_BIND_TCP, port, "bind"));
    }
  }
  if (sys::landlock_restrict_self(ruleset.get(), 0) != 0) {
    int err = errno;
    Status s = Status::from_errno(err, "landlock_restrict_self");
    if (err == EPERM) return s.with_context("landlock (needs no_new_privs or CAP_SYS_ADMIN)");
    return s;
  }
  return Status::ok();
}

}  // namespace oishell
