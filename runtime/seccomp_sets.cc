#include "runtime/seccomp_sets.h"

#include <linux/netlink.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>

namespace oishell::seccomp_sets {
namespace {

constexpr uint64_t kInt = 0xffffffffULL;

ArgCheck int_eq(unsigned arg, uint64_t value) { return {arg, ArgCheck::Op::masked_eq, kInt, value}; }
ArgCheck has_bits(unsigned arg, uint64_t bits) { return {arg, ArgCheck::Op::masked_eq, bits, bits}; }

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
// raw and packet-type sockets are denied in the IP families too.
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
  sets.push_back({"terminal_injection", "faking terminal input (ioctl TIOCSTI, TIOCLINUX)",
                  {{"ioctl", EPERM, true, {int_eq(1, TIOCSTI)}}, {"ioctl", EPERM, true, {int_eq(1, TIOCLINUX)}}}});
  sets.push_back({"sockets", "raw, packet, vsock, non-route netlink and other exotic sockets", socket_rules()});
  sets.push_back({"clock_and_admin", "setting clocks, reboot, swap, hostname, accounting, quotas, kernel log, I/O ports",
                  always({"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "reboot", "swapon", "swapoff",
                          "sethostname", "setdomainname", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup",
                          "iopl", "ioperm"})});
  sets.push_back({"strict_extras", "calls an executor never needs (personality, NUMA, LDT, fanotify, legacy calls)",
                  always({"personality", "modify_ldt", "uselib", "ustat", "sysfs", "_sysctl", "migrate_pages",
                          "move_pages", "mbind", "set_mempolicy", "set_mempolicy_home_node", "fanotify_init",
                          "process_madvise", "memfd_secret", "lookup_dcookie", "nfsservctl", "create_module"})});
  return sets;
}

}  // namespace

const std::vector<DenySet>& all() {
  static const std::vector<DenySet> sets = build();
  return sets;
}

const DenySet* find(std::string_view name) {
  for (const auto& s : all()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::vector<std::string_view> default_set_names() {
  std::vector<std::string_view> names;
  for (const auto& s : all()) {
    if (s.name != "strict_extras") names.push_back(s.name);
  }
  return names;
}

}  // namespace oishell::seccomp_sets
