#include "policy/seccomp_sets.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

namespace oishell::seccomp_sets {
namespace {

constexpr uint64_t kInt = 0xffffffffULL;

ArgCheck int_eq(unsigned arg, uint64_t value) { return {arg, ArgCheck::Op::masked_eq, kInt, value}; }
ArgCheck has_bits(unsigned arg, uint64_t bits) { return {arg, ArgCheck::Op::masked_eq, bits, bits}; }
ArgCheck in_block(unsigned arg, Block b) { return {arg, ArgCheck::Op::masked_eq, b.mask, b.value}; }

std::vector<Rule> always(std::initializer_list<const char*> names, int err = EPERM) {
  std::vector<Rule> rules;
  for (const char* n : names) rules.push_back({n, err, true, {}});
  return rules;
}

// unshare(2)/clone(2) with any flag that makes a namespace. CLONE_NEWTIME (0x80) is only meaningful to unshare:
// in clone's flags those bits are the exit signal.
std::vector<Rule> namespace_rules() {
  const uint64_t clone_flags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,   CLONE_NEWNET,
                                  CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP};
  std::vector<Rule> rules;
  for (uint64_t f : clone_flags) {
    rules.push_back({"unshare", EPERM, true, {has_bits(0, f)}});
    rules.push_back({"clone", EPERM, true, {has_bits(0, f)}});
  }
  rules.push_back({"unshare", EPERM, true, {has_bits(0, CLONE_NEWTIME)}});
  rules.push_back({"setns", EPERM, true, {}});
  // clone3 takes its flags in a struct the filter cannot read: ENOSYS, so libc falls back to clone, filtered above.
  rules.push_back({"clone3", ENOSYS, false, {}});
  return rules;
}

// socket(2): only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK/NETLINK_ROUTE (for getifaddrs, `ip addr`) are allowed;
// raw and packet-type sockets are denied in the IP families too, and so is every IP protocol but the default (0), TCP,
// UDP and the unprivileged ping sockets (ICMP, ICMPv6): asking for another (SCTP, L2TP, SMC = 256, ...) autoloads its
// module. socketpair(2) works only for AF_UNIX (other families, AF_TIPC among them, can make pairs and load
// modules); its `ne` compares all 64 bits, erring towards denying.
std::vector<Rule> socket_rules() {
  std::vector<Rule> rules;
  for (uint64_t family = 0; family < AF_MAX; ++family) {
    if (family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK) continue;
    rules.push_back({"socket", EPERM, true, {int_eq(0, family)}});
  }
  rules.push_back({"socket", EPERM, true, {{0, ArgCheck::Op::ge, 0, AF_MAX}}});
  rules.push_back({"socket", EPERM, true, {int_eq(0, AF_NETLINK), {2, ArgCheck::Op::ne, 0, NETLINK_ROUTE}}});
  for (uint64_t family : {AF_INET, AF_INET6}) {
    rules.push_back({"socket", EPERM, true, {int_eq(0, family), {1, ArgCheck::Op::masked_eq, 0xf, SOCK_RAW}}});
    rules.push_back({"socket", EPERM, true, {int_eq(0, family), {1, ArgCheck::Op::masked_eq, 0xf, SOCK_PACKET}}});
    const uint32_t ping = family == AF_INET ? uint32_t{IPPROTO_ICMP} : uint32_t{IPPROTO_ICMPV6};
    for (Block b : blocks_except(0, 255, {0, IPPROTO_TCP, IPPROTO_UDP, ping})) {
      rules.push_back({"socket", EPERM, true, {int_eq(0, family), in_block(2, b)}});
    }
    rules.push_back({"socket", EPERM, true, {int_eq(0, family), {2, ArgCheck::Op::ge, 0, 256}}});
  }
  rules.push_back({"socketpair", EPERM, true, {{0, ArgCheck::Op::ne, 0, AF_UNIX}}});
  return rules;
}

// No set-user-ID or set-group-ID bit on any file: the sandbox runs with the caller's uid, so a sandbox started by
// root could otherwise leave set-uid-root programs in the workspace. Each call that takes a mode in a register is
// denied when the mode has S_ISUID or S_ISGID; open(2)/openat(2) only when the flags create a file (O_CREAT, or the
// kernel's __O_TMPFILE bit: glibc's __O_TMPFILE includes O_DIRECTORY). mknod makes regular files too. openat2(2)
// takes its mode in memory the filter cannot read without a race: ENOSYS, unreported (callers fall back to openat).
std::vector<Rule> setid_rules() {
  struct ModeArg {
    const char* syscall;
    unsigned arg;
  };
  const ModeArg mode_args[] = {{"chmod", 1}, {"fchmod", 1},  {"fchmodat", 2}, {"fchmodat2", 2},
                               {"mknod", 1}, {"mknodat", 2}, {"creat", 1}};
  const uint64_t kernel_tmpfile = O_TMPFILE & ~O_DIRECTORY;
  std::vector<Rule> rules;
  for (uint64_t bit : {S_ISUID, S_ISGID}) {
    for (const auto& m : mode_args) rules.push_back({m.syscall, EPERM, true, {has_bits(m.arg, bit)}});
    for (uint64_t create : {uint64_t{O_CREAT}, kernel_tmpfile}) {
      rules.push_back({"open", EPERM, true, {has_bits(1, create), has_bits(2, bit)}});
      rules.push_back({"openat", EPERM, true, {has_bits(2, create), has_bits(3, bit)}});
    }
  }
  rules.push_back({"openat2", ENOSYS, false, {}});
  return rules;
}

// personality(2): only what Docker's default profile allows: PER_LINUX, PER_LINUX32, each with UNAME26, and the
// query 0xffffffff. ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO and the foreign execution domains are
// denied. The kernel reads an unsigned int, so the blocks compare the low 32 bits.
std::vector<Rule> personality_rules() {
  std::vector<Rule> rules;
  const std::vector<uint32_t> allowed = {PER_LINUX, PER_LINUX32, UNAME26, uint32_t{UNAME26} | uint32_t{PER_LINUX32},
                                         0xffffffff};
  for (Block b : blocks_except(0, 0xffffffff, allowed)) {
    rules.push_back({"personality", EPERM, true, {in_block(0, b)}});
  }
  return rules;
}

std::vector<DenySet> build() {
  std::vector<DenySet> sets;
  sets.push_back({"mount_and_pivot", "mount, unmount, chroot, pivot_root and the new mount API",
                  always({"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
                          "fsmount", "fspick", "mount_setattr"})});
  sets.push_back({"namespaces", "new namespaces (unshare, setns, clone with CLONE_NEW*; clone3 -> ENOSYS)",
                  namespace_rules()});
  sets.push_back({"kernel_modules", "loading and removing kernel modules",
                  always({"init_module", "finit_module", "delete_module"})});
  sets.push_back({"kexec", "loading a new kernel", always({"kexec_load", "kexec_file_load"})});
  sets.push_back({"keyring", "the kernel keyrings (shared with the host, not namespaced)",
                  always({"add_key", "request_key", "keyctl"})});
  sets.push_back({"bpf_and_perf", "eBPF programs and perf events", always({"bpf", "perf_event_open"})});
  sets.push_back({"tracing", "ptrace, reading or writing another process's memory or fds",
                  always({"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"})});
  sets.push_back({"userfaultfd", "userfaultfd (a tool for kernel race exploits)", always({"userfaultfd"})});
  sets.push_back({"io_uring", "io_uring (bypasses seccomp for the operations it performs)",
                  always({"io_uring_setup", "io_uring_enter", "io_uring_register"})});
  {
    DenySet handles{"handles", "file handles (open_by_handle_at escapes a chroot-like root)",
                    always({"open_by_handle_at"})};
    // Libraries treat EOPNOTSUPP from name_to_handle_at as "this file system has no handles" and fall back.
    handles.rules.push_back({"name_to_handle_at", EOPNOTSUPP, true, {}});
    sets.push_back(std::move(handles));
  }
  // TIOCSETD loads a line discipline, autoloading its module, on any tty the caller may open (its own ptys too).
  sets.push_back({"terminal_injection",
                  "faking terminal input (ioctl TIOCSTI, TIOCLINUX), line disciplines (TIOCSETD)",
                  {{"ioctl", EPERM, true, {int_eq(1, TIOCSTI)}},
                   {"ioctl", EPERM, true, {int_eq(1, TIOCLINUX)}},
                   {"ioctl", EPERM, true, {int_eq(1, TIOCSETD)}}}});
  sets.push_back({"sockets",
                  "raw, packet, vsock, non-route netlink and other exotic sockets, IP protocols that load modules, "
                  "socketpair other than AF_UNIX",
                  socket_rules()});
  sets.push_back({"clock_and_admin", "setting clocks, reboot, swap, hostname, accounting, quotas, kernel log, I/O ports",
                  always({"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "reboot", "swapon", "swapoff",
                          "sethostname", "setdomainname", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup",
                          "iopl", "ioperm"})});
  sets.push_back({"setid_files", "set-user-ID and set-group-ID bits on files (chmod, open, creat, mknod modes)",
                  setid_rules()});
  sets.push_back({"personality", "execution domains but Linux and Linux32 (no ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC)",
                  personality_rules()});
  sets.push_back({"strict_extras", "calls an executor never needs (NUMA, LDT, fanotify, legacy calls)",
                  always({"modify_ldt", "uselib", "ustat", "sysfs", "_sysctl", "migrate_pages", "move_pages", "mbind",
                          "set_mempolicy", "set_mempolicy_home_node", "fanotify_init", "process_madvise",
                          "memfd_secret", "lookup_dcookie", "nfsservctl", "create_module"})});
  return sets;
}

}  // namespace

const std::vector<DenySet>& all() {
  static const std::vector<DenySet> sets = build();
  return sets;
}

const std::vector<Rule>& broker_rules() {
  static const std::vector<Rule> rules = {
      {"connect", 0, true, {}},
      {"sendto", 0, true, {has_bits(3, MSG_FASTOPEN)}},
      {"sendmsg", 0, true, {has_bits(2, MSG_FASTOPEN)}},
      {"sendmmsg", 0, true, {has_bits(3, MSG_FASTOPEN)}},
  };
  return rules;
}

const std::vector<Rule>& observed_path_rules() {
  static const std::vector<Rule> rules = {
      {"open", 0, true, {}},       {"openat", 0, true, {}},    {"openat2", 0, true, {}},  {"creat", 0, true, {}},
      {"execve", 0, true, {}},     {"execveat", 0, true, {}},  {"mkdir", 0, true, {}},    {"mkdirat", 0, true, {}},
      {"unlink", 0, true, {}},     {"unlinkat", 0, true, {}},  {"rmdir", 0, true, {}},    {"rename", 0, true, {}},
      {"renameat", 0, true, {}},   {"renameat2", 0, true, {}}, {"link", 0, true, {}},     {"linkat", 0, true, {}},
      {"symlink", 0, true, {}},    {"symlinkat", 0, true, {}}, {"truncate", 0, true, {}},
  };
  return rules;
}

const DenySet* find(std::string_view name) {
  for (const auto& s : all()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::vector<Block> aligned_blocks(uint32_t lo, uint32_t hi) {
  std::vector<Block> blocks;
  const uint64_t end = uint64_t{hi} + 1;
  for (uint64_t at = lo; at < end;) {
    // The largest block aligned at `at` (2^32 at 0), halved until it ends within the range.
    uint64_t size = at == 0 ? uint64_t{1} << 32 : at & (~at + 1);
    while (at + size > end) size >>= 1;
    blocks.push_back({static_cast<uint32_t>(~(size - 1)), static_cast<uint32_t>(at)});
    at += size;
  }
  return blocks;
}

std::vector<Block> blocks_except(uint32_t lo, uint32_t hi, std::vector<uint32_t> allowed) {
  std::sort(allowed.begin(), allowed.end());
  std::vector<Block> blocks;
  uint64_t from = lo;  // the start of the current gap
  auto add_gap = [&](uint64_t to) {  // [from, to]
    if (from > to) return;
    auto gap = aligned_blocks(static_cast<uint32_t>(from), static_cast<uint32_t>(to));
    blocks.insert(blocks.end(), gap.begin(), gap.end());
  };
  for (uint32_t v : allowed) {
    if (v < from || v > hi) continue;
    if (v > from) add_gap(v - 1);
    from = uint64_t{v} + 1;
  }
  if (from <= hi) add_gap(hi);
  return blocks;
}

std::vector<std::string_view> default_set_names() {
  std::vector<std::string_view> names;
  for (const auto& s : all()) {
    if (s.name != "strict_extras") names.push_back(s.name);
  }
  return names;
}

const std::vector<std::string_view>& floor_set_names() {
  static const std::vector<std::string_view> names = {"io_uring", "setid_files"};
  return names;
}

std::string why_not_liftable(std::string_view syscall) {
  for (std::string_view name : floor_set_names()) {
    const DenySet* set = find(name);
    if (set == nullptr) continue;
    for (const Rule& rule : set->rules) {
      if (syscall != rule.syscall) continue;
      if (name == "io_uring") {
        return "io_uring performs open, connect, socket and other calls inside the kernel, where seccomp never sees "
               "them: every deny set and the connect broker would be gone round";
      }
      return "`" + std::string(syscall) + "` is refused only with set-user-ID or set-group-ID bits, which a sandbox "
             "never needs and which, in a sandbox root started, would leave set-uid-root files on the host";
    }
  }
  return "";
}

Result<std::vector<SetInEffect>> sets_in_effect(const SeccompSpec& spec) {
  for (const auto& allowed : spec.allow_syscalls) {
    if (std::string why = why_not_liftable(allowed); !why.empty()) {
      return Status::error("seccomp: allow_syscalls cannot take out `" + allowed + "`: " + why);
    }
  }
  std::vector<std::string_view> names(spec.deny_sets.begin(), spec.deny_sets.end());
  if (names.empty()) names = default_set_names();
  if (spec.level == SeccompLevel::strict) names.push_back("strict_extras");
  for (std::string_view floor : floor_set_names()) {
    if (std::find(names.begin(), names.end(), floor) == names.end()) {
      return Status::error("seccomp: the deny sets leave out `" + std::string(floor) +
                           "`, which every sandbox holds (" + std::string(find(floor)->purpose) + ")");
    }
  }
  std::vector<SetInEffect> out;
  for (std::string_view name : names) {
    const DenySet* set = find(name);
    if (set == nullptr) return Status::error("seccomp: unknown deny set `" + std::string(name) + "`");
    if (std::any_of(out.begin(), out.end(), [&](const SetInEffect& s) { return s.set->name == name; })) continue;
    if (name == "namespaces" && spec.nested_namespaces) continue;
    SetInEffect effect{set, {}, {}};
    for (const Rule& rule : set->rules) {
      const bool lifted = std::find(spec.allow_syscalls.begin(), spec.allow_syscalls.end(), rule.syscall) !=
                          spec.allow_syscalls.end();
      if (!lifted) {
        effect.rules.push_back(&rule);
      } else if (std::find(effect.lifted.begin(), effect.lifted.end(), rule.syscall) == effect.lifted.end()) {
        effect.lifted.emplace_back(rule.syscall);
      }
    }
    out.push_back(std::move(effect));
  }
  return out;
}

}  // namespace oishell::seccomp_sets
