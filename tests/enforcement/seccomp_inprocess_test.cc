// seccomp in-process: the deny sets answer with their errno (through the user-notification listener, served here
// the way the supervisor serves it), each beside an allowed neighbour; foreign ABIs are killed.
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"
#include "runtime/inside/seccomp.h"
#include "policy/seccomp_sets.h"
#include "seal_child.h"

namespace oishell::test {
namespace {

SeccompSpec default_spec() {
  SeccompSpec spec;
  for (auto name : seccomp_sets::default_set_names()) spec.deny_sets.emplace_back(name);
  return spec;
}

// Applies the filter in the child and passes the notify fd up; returns false (after reporting why) on failure.
bool seal(const Child& c, const SeccompSpec& spec) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    c.report("seal", "prctl: " + errno_result(-1));
    return false;
  }
  auto fd = seccomp_apply(spec);
  if (!fd) {
    c.report("seal", fd.status().message());
    return false;
  }
  if (!fd->valid() || !c.send_fd(fd->get())) {
    c.report("seal", "no notify fd");
    return false;
  }
  c.report("seal", "ok");
  return true;
}

long sys(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) { return ::syscall(nr, a, b, c, d, e); }

bool has_event(const std::vector<nlohmann::json>& events, const std::string& syscall, const std::string& set,
               const std::string& err) {
  for (const auto& e : events) {
    if (e.value("event", "") == "denied" && e.value("kind", "") == "syscall" && e.value("syscall", "") == syscall &&
        e.value("set", "") == set && e.value("errno", "") == err && e.value("pid", 0) > 0) {
      return true;
    }
  }
  return false;
}

TEST(SeccompInProcess, DefaultSetsDenyWithTheirErrnoAndAllowNeighbours) {
  SeccompSpec spec = default_spec();
  CollectingSink sink;
  ChildReport r = run_in_child(
      [&](const Child& c) {
        if (!seal(c, spec)) return 1;
        // Without the filter: ENOENT (no such target), EPERM/ok for a user/root, EFAULT/EINVAL for bad pointers.
        c.result("mount", ::syscall(SYS_mount, "none", "/nonexistent-oishell", "tmpfs", 0, nullptr));
        c.result("umount2", sys(SYS_umount2, reinterpret_cast<long>("/nonexistent-oishell"), 0));
        c.result("chroot", sys(SYS_chroot, reinterpret_cast<long>("/nonexistent-oishell")));
        c.result("pivot_root", sys(SYS_pivot_root, reinterpret_cast<long>("/nonexistent-a"),
                                   reinterpret_cast<long>("/nonexistent-b")));
        c.result("unshare_user", sys(SYS_unshare, CLONE_NEWUSER));
        c.result("unshare_net", sys(SYS_unshare, CLONE_NEWNET));
        c.result("unshare_files", sys(SYS_unshare, CLONE_FILES));  // neighbour: no namespace, allowed
        c.result("setns", sys(SYS_setns, -1, 0));
        c.result("clone_newuser", [&] {
          long pid = sys(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
          if (pid == 0) ::_exit(0);
          if (pid > 0) ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
          return pid;
        }());
        c.result("clone3", sys(SYS_clone3, 0, 0));  // without the filter: EINVAL (size 0)
        c.result("fork", [] {
          pid_t pid = ::fork();
          if (pid == 0) ::_exit(0);
          if (pid > 0) ::waitpid(pid, nullptr, 0);
          return static_cast<long>(pid);
        }());
        c.result("init_module", sys(SYS_init_module, 0, 0, reinterpret_cast<long>("")));
        c.result("kexec_load", sys(SYS_kexec_load, 0, 0, 0, 0));
        c.result("keyctl", sys(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0));
        c.result("bpf", sys(SYS_bpf, 5 /* BPF_PROG_LOAD */, 0, 0));
        c.result("perf_event_open", sys(SYS_perf_event_open, 0, 0, -1, -1, 0));
        c.result("ptrace", sys(SYS_ptrace, 2 /* PTRACE_PEEKDATA */, ::getppid(), 0, 0));
        c.result("process_vm_readv", sys(SYS_process_vm_readv, ::getppid(), 0, 0, 0, 0));
        c.result("userfaultfd", sys(SYS_userfaultfd, 0));
        c.result("io_uring_setup", sys(SYS_io_uring_setup, 1, 0));
        c.result("open_by_handle_at", sys(SYS_open_by_handle_at, AT_FDCWD, 0, 0));
        c.result("settimeofday", sys(SYS_settimeofday, 0, 0));
        c.result("reboot", sys(SYS_reboot, 0, 0, 0, 0));
        c.result("sethostname", sys(SYS_sethostname, reinterpret_cast<long>("x"), 1));
        c.result("af_packet", ::socket(AF_PACKET, SOCK_RAW, 0));
        // The domain with garbage in the upper half: the kernel reads an int, so the mask must catch it.
        c.result("af_packet_hi", sys(SYS_socket, (1L << 32) | AF_PACKET, SOCK_RAW, 0));
        c.result("af_vsock", ::socket(AF_VSOCK, SOCK_STREAM, 0));
        c.result("af_alg", ::socket(AF_ALG, SOCK_SEQPACKET, 0));
        c.result("inet_raw", ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP));
        c.result("inet6_raw", ::socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6));
        c.result("netlink_audit", ::socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT));
        c.result("netlink_route", ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
        c.result("inet_stream", ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        c.result("inet6_dgram", ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        c.result("unix_stream", ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        c.result("read_file", ::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
        // A pseudo-terminal made our controlling terminal, so that TIOCSTI would work without the filter
        // (dev.tty.legacy_tiocsti=1 here).
        int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 || ::setsid() < 0) {
          c.report("pty", "setup failed: " + errno_result(-1));
          return 1;
        }
        int slave = ::open(::ptsname(master), O_RDWR | O_CLOEXEC);
        c.result("tiocsctty", ::ioctl(slave, TIOCSCTTY, 0));
        char ch = 'x';
        c.result("tiocsti", ::ioctl(slave, TIOCSTI, &ch));
        c.result("tiocsti_hi", sys(SYS_ioctl, slave, (1L << 32) | TIOCSTI, reinterpret_cast<long>(&ch)));
        c.result("tioclinux", ::ioctl(slave, TIOCLINUX, &ch));
        winsize ws{};
        c.result("tiocgwinsz", ::ioctl(slave, TIOCGWINSZ, &ws));
        return 0;
      },
      &spec, &sink);
  ASSERT_EQ(r.at("seal"), "ok") << r.log;
  EXPECT_EQ(r.status, 0) << r.log;
  for (const char* k : {"mount", "umount2", "chroot", "pivot_root", "unshare_user", "unshare_net", "setns",
                        "clone_newuser", "init_module", "kexec_load", "keyctl", "bpf", "perf_event_open", "ptrace",
                        "process_vm_readv", "userfaultfd", "io_uring_setup", "open_by_handle_at", "settimeofday",
                        "reboot", "sethostname", "af_packet", "af_packet_hi", "af_vsock", "af_alg", "inet_raw",
                        "inet6_raw", "netlink_audit", "tiocsti", "tiocsti_hi", "tioclinux"}) {
    EXPECT_EQ(r.at(k), "EPERM") << k << "\n" << r.log;
  }
  EXPECT_EQ(r.at("clone3"), "ENOSYS") << r.log;  // libc falls back to clone(2)
  for (const char* k : {"unshare_files", "fork", "netlink_route", "inet_stream", "inet6_dgram", "unix_stream",
                        "read_file", "tiocsctty", "tiocgwinsz"}) {
    EXPECT_EQ(r.at(k), "ok") << k << "\n" << r.log;
  }
  auto events = sink.events();
  EXPECT_TRUE(has_event(events, "mount", "mount_and_pivot", "EPERM")) << nlohmann::json(events).dump();
  EXPECT_TRUE(has_event(events, "unshare", "namespaces", "EPERM"));
  EXPECT_TRUE(has_event(events, "keyctl", "keyring", "EPERM"));
  EXPECT_TRUE(has_event(events, "socket", "sockets", "EPERM"));
  EXPECT_TRUE(has_event(events, "ioctl", "terminal_injection", "EPERM"));
  for (const auto& e : events) EXPECT_NE(e.value("syscall", ""), "clone3") << "clone3 is answered by the filter";
}

// The sets that close kernel surface and set-id files: setid_files, personality, and the socketpair, IP protocol
// and TIOCSETD rules of sockets and terminal_injection. Each beside its allowed neighbour.
TEST(SeccompInProcess, SetIdPersonalityAndKernelSurface) {
  SeccompSpec spec = default_spec();
  TempDir dir;
  const std::string file = dir.write("file", "x");
  ASSERT_EQ(0, ::chmod(file.c_str(), 0644));
  const std::string created = dir.path() + "/created";
  CollectingSink sink;
  ChildReport r = run_in_child(
      [&](const Child& c) {
        if (!seal(c, spec)) return 1;
        // Without the filter every set-id call succeeds on the caller's own file.
        c.result("chmod_4755", sys(SYS_chmod, reinterpret_cast<long>(file.c_str()), 04755));
        c.result("chmod_2755_hi", sys(SYS_chmod, reinterpret_cast<long>(file.c_str()), (1L << 32) | 02755));
        c.result("fchmodat_6755", sys(SYS_fchmodat, AT_FDCWD, reinterpret_cast<long>(file.c_str()), 06755));
        c.result("chmod_0755", sys(SYS_chmod, reinterpret_cast<long>(file.c_str()), 0755));
        c.result("chmod_1777", sys(SYS_chmod, reinterpret_cast<long>(file.c_str()), 01777));
        c.result("openat_creat_4755", sys(SYS_openat, AT_FDCWD, reinterpret_cast<long>(created.c_str()),
                                          O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 04755));
        c.result("openat_creat_0755", sys(SYS_openat, AT_FDCWD, reinterpret_cast<long>(created.c_str()),
                                          O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755));
        // No O_CREAT: the mode is never used, whatever the register holds.
        c.result("openat_read_6777", sys(SYS_openat, AT_FDCWD, reinterpret_cast<long>(file.c_str()),
                                         O_RDONLY | O_CLOEXEC, 06777));
        c.result("openat2", sys(SYS_openat2, AT_FDCWD, reinterpret_cast<long>(file.c_str()), 0, 0));
        // socketpair: EOPNOTSUPP without the filter for AF_INET.
        int pair[2];
        c.result("socketpair_inet", ::socketpair(AF_INET, SOCK_STREAM, 0, pair));
        c.result("socketpair_unix", ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair));
        c.result("inet_sctp", ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_SCTP));
        c.result("inet_tcp_hi", sys(SYS_socket, AF_INET, SOCK_STREAM, (1L << 32) | IPPROTO_TCP));
        c.result("inet_tcp", ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP));
        c.result("inet6_udp", ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP));
        int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        int slave = -1;
        if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 ||
            (slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
          c.report("pty", "setup failed: " + errno_result(-1));
          return 1;
        }
        int ldisc = 0;  // N_TTY: loads nothing; without the filter TIOCSETD works
        c.result("tiocsetd", ::ioctl(slave, TIOCSETD, &ldisc));
        c.result("tiocgetd", ::ioctl(slave, TIOCGETD, &ldisc));
        // personality: without the filter each of these works.
        c.result("personality_no_random", sys(SYS_personality, ADDR_NO_RANDOMIZE));
        c.result("personality_no_random_hi", sys(SYS_personality, (1L << 32) | ADDR_NO_RANDOMIZE));
        c.result("personality_read_exec", sys(SYS_personality, READ_IMPLIES_EXEC));
        c.result("personality_query", sys(SYS_personality, 0xffffffffL));
        c.result("personality_linux", sys(SYS_personality, PER_LINUX));
        return 0;
      },
      &spec, &sink);
  ASSERT_EQ(r.at("seal"), "ok") << r.log;
  EXPECT_EQ(r.status, 0) << r.log;
  for (const char* k : {"chmod_4755", "chmod_2755_hi", "fchmodat_6755", "openat_creat_4755", "socketpair_inet",
                        "inet_sctp", "inet_tcp_hi", "tiocsetd", "personality_no_random", "personality_no_random_hi",
                        "personality_read_exec"}) {
    EXPECT_EQ(r.at(k), "EPERM") << k << "\n" << r.log;
  }
  EXPECT_EQ(r.at("openat2"), "ENOSYS") << r.log;  // its mode is in memory; callers fall back to openat
  for (const char* k : {"chmod_0755", "chmod_1777", "openat_creat_0755", "openat_read_6777", "socketpair_unix",
                        "inet_tcp", "inet6_udp", "tiocgetd", "personality_query", "personality_linux"}) {
    EXPECT_EQ(r.at(k), "ok") << k << "\n" << r.log;
  }
  struct stat st;
  ASSERT_EQ(0, ::stat(file.c_str(), &st));
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  ASSERT_EQ(0, ::stat(created.c_str(), &st));
  EXPECT_EQ(st.st_mode & 07000, 0u);
  auto events = sink.events();
  EXPECT_TRUE(has_event(events, "chmod", "setid_files", "EPERM")) << nlohmann::json(events).dump();
  EXPECT_TRUE(has_event(events, "fchmodat", "setid_files", "EPERM"));
  EXPECT_TRUE(has_event(events, "openat", "setid_files", "EPERM"));
  EXPECT_TRUE(has_event(events, "socketpair", "sockets", "EPERM"));
  EXPECT_TRUE(has_event(events, "socket", "sockets", "EPERM"));
  EXPECT_TRUE(has_event(events, "ioctl", "terminal_injection", "EPERM"));
  EXPECT_TRUE(has_event(events, "personality", "personality", "EPERM"));
  for (const auto& e : events) EXPECT_NE(e.value("syscall", ""), "openat2") << "openat2 is answered by the filter";
}

TEST(SeccompInProcess, X32SyscallIsKilled) {
  SeccompSpec spec = default_spec();
  ChildReport r = run_in_child(
      [&](const Child& c) {
        if (!seal(c, spec)) return 1;
        c.report("before", "ok");
        sys(0x40000000L | SYS_getpid);  // x32 ABI; without the filter: ENOSYS or the pid
        c.report("after", "survived");
        return 0;
      },
      &spec);
  ASSERT_EQ(r.at("seal"), "ok") << r.log;
  EXPECT_EQ(r.at("before"), "ok");
  EXPECT_EQ(r.status, 128 + SIGSYS) << r.log;
}

long i386_getpid() {
  long ret = 20;  // i386 getpid through int 0x80
  asm volatile("int $0x80" : "+a"(ret) : : "memory");
  return ret;
}

TEST(SeccompInProcess, I386SyscallIsKilled) {
  ChildReport bare = run_in_child([](const Child& c) {
    ::signal(SIGSEGV, SIG_DFL);  // a sanitizer's SEGV handler would turn the fault into an ordinary exit
    c.report("pid", std::to_string(i386_getpid()));
    return 0;
  });
  if (bare.status == 128 + SIGSEGV) {
    GTEST_SKIP() << "kernel feature missing: i386 syscalls (IA32 emulation) - int 0x80 faults even without a filter";
  }
  SeccompSpec spec = default_spec();
  ChildReport r = run_in_child(
      [&](const Child& c) {
        if (!seal(c, spec)) return 1;
        c.report("before", "ok");
        c.report("after", std::to_string(i386_getpid()));  // without the filter: the pid
        return 0;
      },
      &spec);
  ASSERT_EQ(r.at("seal"), "ok") << r.log;
  EXPECT_EQ(r.status, 128 + SIGSYS) << r.log;
}

TEST(SeccompInProcess, StrictAddsExtrasAndAllowSyscallsRemovesNames) {
  SeccompSpec strict = default_spec();
  strict.level = SeccompLevel::strict;
  strict.allow_syscalls = {"ptrace"};
  ChildReport r = run_in_child(
      [&](const Child& c) {
        if (!seal(c, strict)) return 1;
        c.result("modify_ldt", sys(SYS_modify_ldt, 0 /* read */, 0, 0));  // without the filter: 0 bytes read
        c.result("personality", sys(SYS_personality, 0xffffffffL));  // its own set, in both levels: the query works
        c.result("ptrace", sys(SYS_ptrace, 2 /* PTRACE_PEEKDATA */, ::getppid(), 0, 0));
        c.result("mount", ::syscall(SYS_mount, "none", "/nonexistent-oishell", "tmpfs", 0, nullptr));
        return 0;
      },
      &strict);
  ASSERT_EQ(r.at("seal"), "ok") << r.log;
  EXPECT_EQ(r.at("modify_ldt"), "EPERM") << r.log;
  EXPECT_EQ(r.at("personality"), "ok") << r.log;
  EXPECT_EQ(r.at("ptrace"), "ESRCH") << r.log;  // allowed through: the kernel's own answer (not a tracee)
  EXPECT_EQ(r.at("mount"), "EPERM") << r.log;

  SeccompSpec plain = default_spec();
  r = run_in_child(
      [&](const Child& c) {
        if (!seal(c, plain)) return 1;
        c.result("modify_ldt", sys(SYS_modify_ldt, 0 /* read */, 0, 0));
        return 0;
      },
      &plain);
  ASSERT_EQ(r.at("seal"), "ok") << r.log;
  EXPECT_EQ(r.at("modify_ldt"), "ok") << r.log;
}

TEST(SeccompInProcess, NestedNamespacesAllowedByPolicy) {
  SeccompSpec spec = default_spec();
  spec.nested_namespaces = true;
  ChildReport r = run_in_child(
      [&](const Child& c) {
        if (!seal(c, spec)) return 1;
        c.result("unshare_user", sys(SYS_unshare, CLONE_NEWUSER));
        c.result("keyctl", sys(SYS_keyctl, 0, -3, 0));
        return 0;
      },
      &spec);
  ASSERT_EQ(r.at("seal"), "ok") << r.log;
  EXPECT_EQ(r.at("unshare_user"), "ok") << r.log;
  EXPECT_EQ(r.at("keyctl"), "EPERM") << r.log;
}

TEST(SeccompInProcess, BadSpecFailsClosed) {
  SeccompSpec unknown_set = default_spec();
  unknown_set.deny_sets.push_back("mount_and_pivott");
  ChildReport r = run_in_child([&](const Child& c) {
    auto fd = seccomp_apply(unknown_set);
    c.report("result", fd ? "loaded" : fd.status().message());
    return 0;
  });
  EXPECT_EQ(r.at("result"), "seccomp: unknown deny set `mount_and_pivott`");

  SeccompSpec unknown_call = default_spec();
  unknown_call.allow_syscalls = {"ptrac"};
  r = run_in_child([&](const Child& c) {
    auto fd = seccomp_apply(unknown_call);
    c.report("result", fd ? "loaded" : fd.status().message());
    return 0;
  });
  EXPECT_EQ(r.at("result"), "seccomp: allow_syscalls names an unknown x86_64 syscall `ptrac`");

  // A spec from elsewhere than a policy file (the supervise protocol's JSON) cannot take out the floor either: no
  // program is loaded without io_uring's and setid_files' rules whole (issue 33, finding 1).
  SeccompSpec uring = default_spec();
  uring.allow_syscalls = {"io_uring_setup", "io_uring_enter", "io_uring_register"};
  r = run_in_child([&](const Child& c) {
    auto fd = seccomp_apply(uring);
    c.report("result", fd ? "loaded" : fd.status().message());
    return 0;
  });
  EXPECT_EQ(r.at("result").rfind("seccomp: allow_syscalls cannot take out `io_uring_setup`: io_uring performs open, "
                                 "connect, socket and other calls inside the kernel",
                                 0),
            0u)
      << r.at("result");
  SeccompSpec no_setid = default_spec();
  no_setid.deny_sets.erase(std::find(no_setid.deny_sets.begin(), no_setid.deny_sets.end(), "setid_files"));
  r = run_in_child([&](const Child& c) {
    auto fd = seccomp_apply(no_setid);
    c.report("result", fd ? "loaded" : fd.status().message());
    return 0;
  });
  EXPECT_EQ(r.at("result").rfind("seccomp: the deny sets leave out `setid_files`, which every sandbox holds", 0), 0u)
      << r.at("result");
}

// The supervisor compiles the program and init loads it after it crossed the control socket as bytes: the
// loaded filter denies exactly as one compiled in place, and the reports table names each reported call's set.
TEST(SeccompInProcess, ProgramCompiledElsewhereLoadsFromItsBytes) {
  SeccompSpec spec = default_spec();
  auto program = seccomp_compile(spec);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  ASSERT_TRUE(program->notify);
  ASSERT_GT(program->reports.set_by_syscall.size(), static_cast<size_t>(SYS_mount));
  EXPECT_EQ(program->reports.set_by_syscall[SYS_mount], "mount_and_pivot");
  EXPECT_EQ(program->reports.errno_by_syscall[SYS_mount], EPERM);
  EXPECT_EQ(program->reports.errno_by_syscall[SYS_getpid], 0);  // not reported: allowed
  const std::string bytes = seccomp_program_to_bytes(*program);
  EXPECT_EQ(bytes.size(), program->instructions.size() * sizeof(sock_filter));

  CollectingSink sink;
  ChildReport r = run_in_child(
      [&](const Child& c) {
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 1;
        auto received = seccomp_program_from_bytes(bytes, /*notify=*/true);
        if (!received) {
          c.report("seal", received.status().message());
          return 1;
        }
        auto fd = seccomp_load_program(*received);
        if (!fd || !fd->valid() || !c.send_fd(fd->get())) {
          c.report("seal", fd ? "no notify fd" : fd.status().message());
          return 1;
        }
        c.report("seal", "ok");
        c.result("keyctl", sys(SYS_keyctl, 0, -3, 0));
        c.result("getpid", sys(SYS_getpid));
        return 0;
      },
      &spec, &sink);
  ASSERT_EQ(r.at("seal"), "ok") << r.log;
  EXPECT_EQ(r.at("keyctl"), "EPERM") << r.log;
  EXPECT_EQ(r.at("getpid"), "ok") << r.log;

  // Bytes that are no BPF program are refused before anything is loaded.
  for (const std::string& bad : {std::string(), std::string(7, 'x'), bytes + "x"}) {
    auto refused = seccomp_program_from_bytes(bad, true);
    ASSERT_FALSE(refused.is_ok());
    EXPECT_EQ(refused.status().message(),
              "seccomp: a program of " + std::to_string(bad.size()) + " bytes is not a BPF program");
  }
}

TEST(SeccompSets, EveryNameResolvesAndEveryDefaultSetIsKnown) {
  for (const auto& set : seccomp_sets::all()) {
    EXPECT_FALSE(set.rules.empty()) << set.name;
    for (const auto& rule : set.rules) EXPECT_GT(rule.err, 0) << rule.syscall;
  }
  EXPECT_EQ(seccomp_sets::default_set_names().size() + 1, seccomp_sets::all().size());
  EXPECT_NE(seccomp_sets::find("terminal_injection"), nullptr);
  auto defaults = seccomp_sets::default_set_names();
  for (std::string_view name : {"setid_files", "personality"}) {
    EXPECT_NE(std::find(defaults.begin(), defaults.end(), name), defaults.end()) << name;
  }
  EXPECT_EQ(std::find(defaults.begin(), defaults.end(), "strict_extras"), defaults.end());
  EXPECT_EQ(seccomp_sets::find("nope"), nullptr);
}

}  // namespace
}  // namespace oishell::test
