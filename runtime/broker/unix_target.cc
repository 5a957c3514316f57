#include "runtime/broker/unix_target.h"

#include <fcntl.h>
#include <linux/openat2.h>

#include <cerrno>

#include "runtime/sys/syscalls.h"

namespace oishell::broker {

Result<UnixTarget> open_unix_target(const Caller& caller, std::string_view sun_path, AsSandbox& as) {
  std::string path(sun_path);
  if (path.empty()) return Status::from_errno(ENOENT, "connect(unix)");
  if (path[0] != '/') {
    auto cwd = caller.cwd();
    if (!cwd) return cwd.status();
    path = (*cwd == "/" ? std::string() : *cwd) + "/" + path;
  }
  auto root = caller.root();
  if (!root) return root.status();
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  UnixTarget target;
  target.where = path;
  int err = 0;
  as.run([&] {
    target.path.reset(sys::openat2(root->get(), path.c_str(), &how));
    err = target.path ? 0 : errno;
  });
  if (!target.path) return Status::from_errno(err, "openat2(" + path + ")");
  if (::fstat(target.path.get(), &target.st) != 0) return Status::from_errno(errno, "fstat(" + path + ")");
  return target;
}

std::vector<InodeId> allowed_unix_inodes(const std::vector<std::string>& host_paths) {
  std::vector<InodeId> out;
  for (const auto& p : host_paths) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) out.push_back({st.st_dev, st.st_ino});
  }
  return out;
}

}  // namespace oishell::broker
