#include "runtime/inside/mount_ops.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <string_view>

#include "runtime/sys/syscalls.h"

namespace oishell::mounts {
namespace {

constexpr uint64_t kNoLinks = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

std::string relative(const std::string& path) {
  size_t start = path.find_first_not_of('/');
  return start == std::string::npos ? "." : path.substr(start);
}

Result<UniqueFd> open_beneath(int root_fd, const std::string& rel, uint64_t extra_flags) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW | extra_flags;
  how.resolve = RESOLVE_BENEATH | kNoLinks;
  int fd = sys::openat2(root_fd, rel.c_str(), &how);
  if (fd < 0) return Status::from_errno(errno, "openat2(\"" + rel + "\", RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS)");
  return UniqueFd(fd);
}

}  // namespace

Result<UniqueFd> lookup(int root_fd, const std::string& path) { return open_beneath(root_fd, relative(path), 0); }

Result<UniqueFd> ensure(int root_fd, const std::string& path, NodeType type) {
  const std::string rel = relative(path);
  // Fast path: it exists already.
  if (auto found = open_beneath(root_fd, rel, 0); found.is_ok() || found.status().errno_value() != ENOENT) {
    if (!found.is_ok()) return found;
    struct stat st;
    if (::fstat(found->get(), &st) != 0) return Status::from_errno(errno, "fstat(\"" + path + "\")");
    bool is_dir = S_ISDIR(st.st_mode);
    if (is_dir != (type == NodeType::directory)) {
      return Status::error(path + " exists but is not a " + (type == NodeType::directory ? "directory" : "file"));
    }
    return found;
  }
  // Walk component by component from the root, creating what is missing.
  UniqueFd dir;
  int dir_fd = root_fd;
  std::string_view rest = rel;
  std::string walked;
  while (!rest.empty()) {
    size_t slash = rest.find('/');
    std::string name(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    walked += "/" + name;
    bool last = rest.empty();
    if (last && type == NodeType::file) {
      int fd = ::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST) return Status::from_errno(errno, "creating mount point " + walked);
      if (fd >= 0) ::close(fd);
      return open_beneath(dir_fd, name, 0);
    }
    if (::mkdirat(dir_fd, name.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::from_errno(errno, "mkdirat(\"" + walked + "\")");
    }
    auto next = open_beneath(dir_fd, name, O_DIRECTORY);
    if (!next.is_ok()) return next.status().with_context("mount point " + walked);
    dir = std::move(next.value());
    dir_fd = dir.get();
  }
  return dir;
}

Result<UniqueFd> open_host_path(const std::string& path) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = kNoLinks;
  int fd = sys::openat2(AT_FDCWD, path.c_str(), &how);
  if (fd < 0) return Status::from_errno(errno, "openat2(\"" + path + "\", O_PATH, RESOLVE_NO_SYMLINKS)");
  return UniqueFd(fd);
}

Result<UniqueFd> clone_tree(int fd, bool recursive) {
  unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  int tree = sys::open_tree(fd, "", flags);
  if (tree < 0) return Status::from_errno(errno, "open_tree(OPEN_TREE_CLONE)");
  return UniqueFd(tree);
}

Status set_attributes(int tree_fd, uint64_t attr_set, bool recursive) {
  mount_attr attr{};
  attr.attr_set = attr_set;
  if (sys::mount_setattr(tree_fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr) != 0) {
    const int err = errno;
    Status failed = Status::from_errno(err, "mount_setattr");
    // Before Linux 5.12 (Debian 11's 5.10): no read-only, nosuid or nodev flag can be set on a detached tree, and
    // oishell builds no mount tree without them (docs/kernels.md).
    if (err == ENOSYS) return failed.with_context("this kernel has no mount_setattr (Linux 5.12 and later have it)");
    return failed;
  }
  return Status::ok();
}

Result<UniqueFd> new_filesystem(const char* type, const std::vector<std::pair<std::string, std::string>>& options,
                                unsigned int attributes) {
  UniqueFd fs(sys::fsopen(type, FSOPEN_CLOEXEC));
  if (!fs) return Status::from_errno(errno, std::string("fsopen(\"") + type + "\")");
  for (const auto& [key, value] : options) {
    if (sys::fsconfig(fs.get(), FSCONFIG_SET_STRING, key.c_str(), value.c_str(), 0) != 0) {
      return Status::from_errno(errno, std::string("fsconfig(") + type + ", " + key + "=" + value + ")");
    }
  }
  if (sys::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
    return Status::from_errno(errno, std::string("fsconfig(") + type + ", FSCONFIG_CMD_CREATE)");
  }
  int mnt = sys::fsmount(fs.get(), FSMOUNT_CLOEXEC, attributes);
  if (mnt < 0) return Status::from_errno(errno, std::string("fsmount(") + type + ")");
  return UniqueFd(mnt);
}

Status attach(int tree_fd, int target_fd) {
  if (sys::move_mount(tree_fd, "", target_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    return Status::from_errno(errno, "move_mount");
  }
  return Status::ok();
}

}  // namespace oishell::mounts
