#include "runtime/outside/path_observer.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <fstream>

namespace oishell {
namespace {

using Mode = PathObservation::Mode;

// One path argument of a call: which argument holds the path, which the directory fd (-1: none, relative to the
// cwd), and what the call does to it.
struct PathArg {
  int path_arg;
  int dirfd_arg;
  Mode mode;
};

bool writes(uint64_t open_flags) {
  return (open_flags & O_ACCMODE) != O_RDONLY || (open_flags & (O_CREAT | O_TRUNC)) != 0;
}

// The path arguments of observed call `nr` with `args`; `open_how_flags` is read for openat2.
std::vector<PathArg> path_args(int nr, const __u64* args, uint64_t open_how_flags) {
  switch (nr) {
    case __NR_open: return {{0, -1, writes(args[1]) ? Mode::write : Mode::read}};
    case __NR_openat: return {{1, 0, writes(args[2]) ? Mode::write : Mode::read}};
    case __NR_openat2: return {{1, 0, writes(open_how_flags) ? Mode::write : Mode::read}};
    case __NR_creat: return {{0, -1, Mode::write}};
    case __NR_execve: return {{0, -1, Mode::exec}};
    case __NR_execveat: return {{1, 0, Mode::exec}};
    case __NR_mkdir:
    case __NR_unlink:
    case __NR_rmdir:
    case __NR_truncate: return {{0, -1, Mode::write}};
    case __NR_mkdirat:
    case __NR_unlinkat: return {{1, 0, Mode::write}};
    case __NR_rename: return {{0, -1, Mode::write}, {1, -1, Mode::write}};
    case __NR_renameat:
    case __NR_renameat2: return {{1, 0, Mode::write}, {3, 2, Mode::write}};
    case __NR_link: return {{0, -1, Mode::read}, {1, -1, Mode::write}};
    case __NR_linkat: return {{1, 0, Mode::read}, {3, 2, Mode::write}};
    case __NR_symlink: return {{1, -1, Mode::write}};      // the first argument is the link's contents
    case __NR_symlinkat: return {{2, 1, Mode::write}};
    default: return {};
  }
}

std::string comm_of(pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name.empty() ? "?" : name;
}

void answer_continue(int notify_fd, uint64_t id) {
  seccomp_notif_resp resp{};
  resp.id = id;
  resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ::ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);  // ENOENT: the caller is gone
}

}  // namespace

std::string normalise_absolute(const std::string& path) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(at, slash - at);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    at = slash + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

void PathObserver::handle(const seccomp_notif& n) {
  {
    std::lock_guard lock(mutex_);
    auto caller = broker::Caller::open(notify_fd_, n.id, static_cast<pid_t>(n.pid), callers_);
    if (caller) {
      uint64_t how_flags = 0;
      if (n.data.nr == __NR_openat2 && n.data.args[2] != 0) {
        open_how how{};
        if (caller->read(n.data.args[2], &how, sizeof how.flags).is_ok()) how_flags = how.flags;
      }
      const std::string program = comm_of(static_cast<pid_t>(n.pid));
      for (const PathArg& arg : path_args(n.data.nr, n.data.args, how_flags)) {
        auto text = caller->read_string(n.data.args[arg.path_arg], PATH_MAX);
        if (!text) continue;  // a bad pointer: the call fails on its own
        std::string path = *text;
        if (path.empty() || path[0] != '/') {
          const int dirfd = arg.dirfd_arg < 0 ? AT_FDCWD : static_cast<int>(n.data.args[arg.dirfd_arg]);
          auto base = dirfd == AT_FDCWD ? caller->cwd() : caller->fd_path(dirfd);
          if (!base) continue;
          path = path.empty() ? *base : *base + "/" + path;
        }
        if (path.empty() || path[0] != '/') continue;  // a directory fd that is not a path (a pipe, a socket)
        record(normalise_absolute(path), arg.mode, program);
      }
    }
  }
  answer_continue(notify_fd_, n.id);
}

void PathObserver::record(const std::string& path, PathObservation::Mode mode, const std::string& program) {
  ++counts_[{path, static_cast<int>(mode), program}];
}

std::vector<PathObservation> PathObserver::observations() const {
  std::lock_guard lock(mutex_);
  std::vector<PathObservation> out;
  for (const auto& [key, count] : counts_) {
    out.push_back({std::get<0>(key), static_cast<Mode>(std::get<1>(key)), std::get<2>(key), count});
  }
  return out;
}

}  // namespace oishell
