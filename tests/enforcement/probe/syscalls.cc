// Syscall actions: the calls the seccomp deny sets, the capability drop and no_new_privs stop.
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "probe.h"

namespace {

long sys(long nr, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) { return ::syscall(nr, a, b, c, d, e); }

long close_if_ok(long fd) {
  if (fd >= 0) ::close(static_cast<int>(fd));
  return fd;
}

// Each attempt is harmless when it succeeds (bad pointers, missing paths) except where noted.
const std::map<std::string, long (*)()>& attempts() {
  static const std::map<std::string, long (*)()> table = {
      {"mount", [] { return ::syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, nullptr); }},
      {"umount", [] { return sys(SYS_umount2, reinterpret_cast<long>("/proc"), 0); }},
      {"chroot", [] { return sys(SYS_chroot, reinterpret_cast<long>("/tmp")); }},
      {"pivot_root", [] { return sys(SYS_pivot_root, reinterpret_cast<long>("/tmp"), reinterpret_cast<long>("/tmp")); }},
      {"unshare_user", [] { return sys(SYS_unshare, CLONE_NEWUSER); }},
      {"unshare_net", [] { return sys(SYS_unshare, CLONE_NEWNET); }},
      {"setns", [] { return sys(SYS_setns, -1, 0); }},
      {"clone3", [] { return sys(SYS_clone3, 0, 0); }},
      {"fork", [] {
         pid_t pid = ::fork();
         if (pid == 0) ::_exit(0);
         if (pid > 0) ::waitpid(pid, nullptr, 0);
         return static_cast<long>(pid);
       }},
      {"init_module", [] { return sys(SYS_init_module, 0, 0, reinterpret_cast<long>("")); }},
      {"finit_module", [] { return sys(SYS_finit_module, -1, reinterpret_cast<long>(""), 0); }},
      {"kexec_load", [] { return sys(SYS_kexec_load, 0, 0, 0, 0); }},
      {"keyctl", [] { return sys(SYS_keyctl, 0, -3, 0); }},
      {"add_key", [] { return sys(SYS_add_key, reinterpret_cast<long>("user"), reinterpret_cast<long>("k"), 0, 0, -3); }},
      // The keyring's third door: a key looked up (and, with a callout, made by /sbin/request-key on the host).
      {"request_key", [] { return sys(SYS_request_key, reinterpret_cast<long>("user"), reinterpret_cast<long>("k"), 0, -3); }},
      {"bpf", [] { return sys(SYS_bpf, 5, 0, 0); }},
      {"perf_event_open", [] { return sys(SYS_perf_event_open, 0, 0, -1, -1, 0); }},
      {"ptrace", [] { return sys(SYS_ptrace, 16 /* PTRACE_ATTACH */, 1, 0, 0); }},
      {"process_vm_readv", [] { return sys(SYS_process_vm_readv, 1, 0, 0, 0, 0); }},
      {"userfaultfd", [] { return close_if_ok(sys(SYS_userfaultfd, 0)); }},
      {"io_uring_setup", [] { return sys(SYS_io_uring_setup, 1, 0); }},
      {"open_by_handle_at", [] { return sys(SYS_open_by_handle_at, AT_FDCWD, 0, 0); }},
      {"settimeofday", [] { return sys(SYS_settimeofday, 0, 0); }},
      {"af_packet", [] { return close_if_ok(::socket(AF_PACKET, SOCK_RAW, 0)); }},
      {"inet_raw", [] { return close_if_ok(::socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)); }},
      {"netlink_audit", [] { return close_if_ok(::socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT)); }},
      {"netlink_route", [] { return close_if_ok(::socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)); }},
      {"inet_stream", [] { return close_if_ok(::socket(AF_INET, SOCK_STREAM, 0)); }},
  };
  return table;
}

}  // namespace

OI_PROBE("syscall", "NAME  (mount umount chroot pivot_root unshare_user unshare_net setns clone3 fork init_module "
                    "finit_module kexec_load keyctl add_key request_key bpf perf_event_open ptrace process_vm_readv userfaultfd "
                    "io_uring_setup open_by_handle_at settimeofday af_packet inet_raw netlink_audit netlink_route "
                    "inet_stream)") {
  if (args.size() != 1) return 2;
  auto it = attempts().find(args[0]);
  if (it == attempts().end()) return 2;
  return probe::report(it->second());
}

OI_PROBE("tiocsti", "[winsz]  (a new pty made the controlling terminal; TIOCSTI into it, or TIOCGWINSZ with winsz)") {
  // In a child: a process-group leader (as a sandboxed command may be) cannot setsid().
  pid_t pid = ::fork();
  if (pid == 0) {
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    int slave = -1;
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 || ::setsid() < 0 ||
        (slave = ::open(::ptsname(master), O_RDWR | O_CLOEXEC)) < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0) {
      std::printf("setup failed: %s\n", strerrorname_np(errno));
    } else if (!args.empty() && args[0] == "winsz") {
      winsize ws{};
      probe::report(::ioctl(slave, TIOCGWINSZ, &ws));
    } else {
      char c = 'x';
      probe::report(::ioctl(slave, TIOCSTI, &c));
    }
    std::fflush(stdout);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return 0;
}

OI_PROBE("status_field", "NAME  (this process's /proc/self/status field, e.g. CapEff, NoNewPrivs, Seccomp)") {
  if (args.size() != 1) return 2;
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(args[0] + ":", 0) == 0) {
      std::puts(line.substr(line.find_first_not_of(" \t", args[0].size() + 1)).c_str());
      return 0;
    }
  }
  std::puts("<absent>");
  return 0;
}

OI_PROBE("setuid_exec", "PATH [ARGS...]  (run a setuid program blocked on stdin; print 'euid same' or 'euid N')") {
  if (args.empty()) return 2;
  int in[2];
  if (::pipe(in) != 0) return probe::report(-1);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  // Wait until the program has replaced the child, then read its effective uid. The sign is its cmdline becoming
  // the new argv: the kernel lays that out after it has installed the program's credentials. (The Name changes
  // earlier in execve, before a set-uid takes effect: a Uid read then was still the caller's.) Ends when the child
  // exits, too.
  std::string argv_text;
  for (const auto& a : args) argv_text += a + '\0';
  std::string euid = "exited";
  bool reaped = false;
  for (;;) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      reaped = true;
      break;
    }
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    std::string now((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (now == argv_text) {
      std::ifstream st("/proc/" + std::to_string(pid) + "/status");
      std::string line;
      while (std::getline(st, line)) {
        if (line.rfind("Uid:", 0) != 0) continue;
        unsigned real = 0, effective = 0;
        std::sscanf(line.c_str(), "Uid: %u %u", &real, &effective);
        euid = effective == ::geteuid() ? "euid same" : "euid " + std::to_string(effective);
      }
      break;
    }
    timespec ts{0, 10 * 1000000};
    ::nanosleep(&ts, nullptr);
  }
  if (!reaped) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  std::puts(euid.c_str());
  return 0;
}
