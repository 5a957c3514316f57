#include "runtime/outside/cgroup_janitor.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "base/scm_rights.h"
#include "runtime/sys/raw_syscall.h"

namespace oishell {
namespace {

constexpr size_t kMaxDirs = 4;
constexpr size_t kPathBytes = 1024;
constexpr size_t kStackBytes = 64 * 1024;

// The janitor's arguments, at the start of its own mapping (its stack follows). The fds are written before the
// clone; directories are appended after it by the supervisor (each one whole before dir_count counts it) and read
// by the janitor only once the supervisor is gone.
struct JanitorArgs {
  int done_fd = -1;    // the janitor's end of the "done" socket
  int init_pidfd = -1;  // -1: init does not exist yet; its pidfd comes as a message ('p')
  std::atomic<size_t> dir_count{0};
  char dirs[kMaxDirs][kPathBytes] = {};
};
static_assert(std::atomic<size_t>::is_always_lock_free);

using sys::raw_syscall;

// Everything below runs in the janitor: raw system calls and plain loops only.
#define OISHELL_JANITOR_CODE [[gnu::no_sanitize("address", "undefined")]] static

struct KernelSigaction {
  unsigned long handler, flags, restorer, mask;
};

OISHELL_JANITOR_CODE void janitor_ignore(int sig) {
  KernelSigaction ignore{reinterpret_cast<unsigned long>(SIG_IGN), 0, 0, 0};
  raw_syscall(SYS_rt_sigaction, sig, reinterpret_cast<long>(&ignore), 0, sizeof(unsigned long));
}

OISHELL_JANITOR_CODE void janitor_join(char* out, const char* dir, const char* file) {
  size_t i = 0;
  for (; *dir && i < kPathBytes - 32; ++dir) out[i++] = *dir;
  out[i++] = '/';
  for (; *file; ++file) out[i++] = *file;
  out[i] = '\0';
}

// SIGKILL to every pid listed in DIR/cgroup.procs (cgroup.kill does it at once on v2).
OISHELL_JANITOR_CODE void janitor_kill_members(const char* dir) {
  char path[kPathBytes + 32];
  janitor_join(path, dir, "cgroup.kill");
  long fd = raw_syscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    raw_syscall(SYS_write, fd, reinterpret_cast<long>("1"), 1);
    raw_syscall(SYS_close, fd);
    return;
  }
  janitor_join(path, dir, "cgroup.procs");
  fd = raw_syscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  long n = raw_syscall(SYS_read, fd, reinterpret_cast<long>(buf), sizeof buf);
  raw_syscall(SYS_close, fd);
  long pid = 0;
  bool digits = false;
  for (long i = 0; i < n; ++i) {
    if (buf[i] >= '0' && buf[i] <= '9') {
      pid = pid * 10 + (buf[i] - '0');
      digits = true;
    } else {
      if (digits) raw_syscall(SYS_kill, pid, SIGKILL);
      pid = 0;
      digits = false;
    }
  }
  if (digits) raw_syscall(SYS_kill, pid, SIGKILL);
}

// One message of the supervisor: 'd' (done), 'p' (init's pidfd, attached), or 0 when the supervisor is gone.
// `*fd` is the attached fd or -1.
OISHELL_JANITOR_CODE char janitor_receive(int done_fd, int* fd) {
  char byte = 0;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  iovec part{&byte, 1};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  long n;
  do {
    n = raw_syscall(SYS_recvmsg, done_fd, reinterpret_cast<long>(&message), MSG_CMSG_CLOEXEC);
  } while (n == -EINTR);
  *fd = -1;
  if (n != 1) return 0;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  if (header && header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS &&
      header->cmsg_len == CMSG_LEN(sizeof(int))) {
    const unsigned char* data = CMSG_DATA(header);
    for (size_t i = 0; i < sizeof *fd; ++i) reinterpret_cast<unsigned char*>(fd)[i] = data[i];
  }
  return byte;
}

OISHELL_JANITOR_CODE int janitor_main(void* arg) {
  const JanitorArgs& args = *static_cast<const JanitorArgs*>(arg);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) janitor_ignore(sig);
  // Its own copy of the supervisor's fd table: keep only the ones it needs (not the supervisor's "done" end, whose
  // closing is the signal, nor the control socket, whose closing tells init the supervisor is gone).
  int init_pidfd = args.init_pidfd;
  if (init_pidfd < 0) {
    if (args.done_fd > 0) raw_syscall(SYS_close_range, 0, args.done_fd - 1, 0);
    raw_syscall(SYS_close_range, args.done_fd + 1, ~0U, 0);
  } else {
    const int keep_low = std::min(args.done_fd, init_pidfd), keep_high = std::max(args.done_fd, init_pidfd);
    raw_syscall(SYS_close_range, 0, keep_low - 1, 0);
    raw_syscall(SYS_close_range, keep_low + 1, keep_high - 1, 0);
    raw_syscall(SYS_close_range, keep_high + 1, ~0U, 0);
  }
  for (;;) {
    int fd = -1;
    const char word = janitor_receive(args.done_fd, &fd);
    if (word == 'p' && fd >= 0 && init_pidfd < 0) {  // init exists now: its pidfd
      init_pidfd = fd;
      continue;
    }
    if (word == 'd') {  // "done": the supervisor cleaned up, and may have left a last reference to drop
      if (fd >= 0) raw_syscall(SYS_close, fd);
      return 0;
    }
    if (fd >= 0) raw_syscall(SYS_close, fd);
    if (word == 0) break;  // the supervisor is gone
  }
  // The supervisor is gone; init follows it (PDEATHSIG). The cgroups can be removed once it has. Without its pidfd
  // (the supervisor died between making init's group and sending it), the kills below end init as well.
  if (init_pidfd >= 0) {
    pollfd init_exited{init_pidfd, POLLIN, 0};
    while (raw_syscall(SYS_poll, reinterpret_cast<long>(&init_exited), 1, -1) == -EINTR) {}
  }
  // Every directory the supervisor announced, made or not (a rmdir of one never made fails with ENOENT).
  const size_t dir_count = std::min(args.dir_count.load(std::memory_order_acquire), kMaxDirs);
  for (size_t d = 0; d < dir_count; ++d) {
    for (int attempt = 0; attempt < 500; ++attempt) {
      janitor_kill_members(args.dirs[d]);
      long rc = raw_syscall(SYS_rmdir, reinterpret_cast<long>(args.dirs[d]));
      if (rc == 0 || rc != -EBUSY) break;
      timespec pause{0, 10 * 1000 * 1000};
      raw_syscall(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    }
  }
  return 0;
}

// One word to the janitor (janitor_receive()), with `fd` attached unless it is -1.
Status send_word(int socket, char word, int fd) {
  ssize_t n = send_with_fds(socket, &word, 1, &fd, fd >= 0 ? 1 : 0);
  if (n != 1) return Status::from_errno(n < 0 ? errno : EIO, std::string("sendmsg(cgroup janitor, '") + word + "')");
  return Status::ok();
}

struct Exiting {
  pid_t pid;
  void* block;
  size_t bytes;
};

std::mutex& exiting_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Janitors told "done" and not reaped yet (their mapping is unmapped once they are).
std::vector<Exiting>& exiting() {
  static std::vector<Exiting> list;
  return list;
}

}  // namespace

Status CgroupJanitor::start(int init_pidfd) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::from_errno(errno, "socketpair(cgroup janitor)");
  }
  UniqueFd read_end(pair[0]);
  UniqueFd write_end(pair[1]);

  const size_t bytes = sizeof(JanitorArgs) + kStackBytes;
  void* block = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (block == MAP_FAILED) return Status::from_errno(errno, "mmap(cgroup janitor stack)");
  auto* args = new (block) JanitorArgs;
  args->done_fd = read_end.get();
  args->init_pidfd = init_pidfd;
  char* stack_top = static_cast<char*>(block) + bytes;
  pid_t pid = ::clone(janitor_main, stack_top, CLONE_VM | SIGCHLD, args);
  if (pid < 0) {
    int err = errno;
    ::munmap(block, bytes);
    return Status::from_errno(err, "clone(CLONE_VM, cgroup janitor)");
  }
  // Its own process group, before any cgroup exists: a kill of the supervisor's group must not take it along.
  // (The parent does it, so that it is done when this returns; best effort: it only fails if the janitor is gone.)
  (void)::setpgid(pid, pid);
  pid_ = pid;
  block_ = block;
  block_bytes_ = bytes;
  done_ = std::move(write_end);
  return Status::ok();  // `read_end` closes here: the janitor has its own copy
}

Status CgroupJanitor::watch(int init_pidfd, const std::string& dir) {
  if (dir.size() >= kPathBytes - 32) return Status::error("cgroup janitor: path too long: " + dir);
  if (pid_ < 0) OI_TRY(start(init_pidfd));
  auto* args = static_cast<JanitorArgs*>(block_);
  const size_t n = args->dir_count.load(std::memory_order_relaxed);
  if (n >= kMaxDirs) return Status::error("cgroup janitor: too many cgroups");
  std::memcpy(args->dirs[n], dir.c_str(), dir.size() + 1);
  args->dir_count.store(n + 1, std::memory_order_release);  // published whole, before the mkdir
  return Status::ok();
}

Status CgroupJanitor::follow_init(int init_pidfd) {
  if (pid_ < 0) return Status::ok();
  return send_word(done_.get(), 'p', init_pidfd);
}

CgroupJanitor& CgroupJanitor::operator=(CgroupJanitor&& other) noexcept {
  if (this != &other) {
    release();
    pid_ = other.pid_;
    block_ = other.block_;
    block_bytes_ = other.block_bytes_;
    done_ = std::move(other.done_);
    other.pid_ = -1;
    other.block_ = nullptr;
    other.block_bytes_ = 0;
  }
  return *this;
}

UniqueFd CgroupJanitor::release(UniqueFd last_reference) {
  if (pid_ < 0) return last_reference;
  if (!send_word(done_.get(), 'd', last_reference.get()).is_ok() && last_reference) {
    (void)send_word(done_.get(), 'd', -1);  // the word alone, then; the reference is dropped here
  }
  done_.reset();
  last_reference.reset();
  // The janitor exits at once; it is reaped (and its mapping unmapped) here if it is gone already, else by a
  // later release(). After this process exits, the system reaps it.
  std::lock_guard lock(exiting_mutex());
  exiting().push_back({pid_, block_, block_bytes_});
  pid_ = -1;
  block_ = nullptr;
  std::erase_if(exiting(), [](const Exiting& e) {
    if (::waitpid(e.pid, nullptr, WNOHANG) == 0) return false;  // still running on its stack: keep the mapping
    ::munmap(e.block, e.bytes);  // reaped, or gone already (ECHILD)
    return true;
  });
  return {};
}

}  // namespace oishell
