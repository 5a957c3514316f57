// Set-id actions: every call that can put a set-user-ID or set-group-ID bit on a file, called raw (no libc
// rewriting: glibc's chmod() may well be fchmodat), plus openat2 and a file capability.
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "probe.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

namespace {

// The kernel's __O_TMPFILE bit (glibc's __O_TMPFILE includes O_DIRECTORY).
constexpr long kTmpfileBit = O_TMPFILE & ~O_DIRECTORY;

long close_if_ok(long fd) {
  if (fd >= 0) ::close(static_cast<int>(fd));
  return fd;
}

// One raw call that takes a mode: -1 with errno on failure, or -2 when `call` is unknown.
long mode_call(const std::string& call, const char* path, long mode) {
  if (call == "chmod") return ::syscall(SYS_chmod, path, mode);
  if (call == "fchmodat") return ::syscall(SYS_fchmodat, AT_FDCWD, path, mode);
  if (call == "fchmodat2") return ::syscall(SYS_fchmodat2, AT_FDCWD, path, mode, 0);
  if (call == "fchmod") {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    long rc = ::syscall(SYS_fchmod, fd, mode);
    int saved = errno;
    ::close(fd);
    errno = saved;
    return rc;
  }
  if (call == "open") return close_if_ok(::syscall(SYS_open, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (call == "openat") {
    return close_if_ok(::syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  }
  if (call == "creat") return close_if_ok(::syscall(SYS_creat, path, mode));
  // PATH is a directory: an unnamed file in it.
  if (call == "tmpfile") {
    return close_if_ok(::syscall(SYS_openat, AT_FDCWD, path, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode));
  }
  // MODE carries the file type (S_IFREG, S_IFIFO).
  if (call == "mknod") return ::syscall(SYS_mknod, path, mode, 0);
  if (call == "mknodat") return ::syscall(SYS_mknodat, AT_FDCWD, path, mode, 0);
  return -2;
}

}  // namespace

OI_PROBE("mode_call", "CALL PATH OCTAL  (raw chmod|fchmod|fchmodat|fchmodat2 PATH to OCTAL; open|openat|creat a new "
                      "PATH with OCTAL; tmpfile: O_TMPFILE in directory PATH; mknod|mknodat PATH, OCTAL with its "
                      "S_IF* type)") {
  if (args.size() != 3) return 2;
  long rc = mode_call(args[0], args[1].c_str(), static_cast<long>(std::stoul(args[2], nullptr, 8)));
  if (rc == -2) return 2;
  return probe::report(rc);
}

OI_PROBE("openat2", "PATH  (openat2(PATH, O_RDONLY) with a zeroed open_how)") {
  if (args.size() != 1) return 2;
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC;
  return probe::report(close_if_ok(::syscall(SYS_openat2, AT_FDCWD, args[0].c_str(), &how, sizeof how)));
}

OI_PROBE("setxattr_caps", "PATH  (a file capability, cap_net_raw permitted and effective, as security.capability)") {
  if (args.size() != 1) return 2;
  vfs_cap_data caps{};
  caps.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE;
  caps.data[0].permitted = 1u << CAP_NET_RAW;
  return probe::report(::setxattr(args[0].c_str(), "security.capability", &caps, XATTR_CAPS_SZ_2, 0));
}

OI_PROBE("setxattr_user", "PATH  (user.oishell = x: the neighbour of setxattr_caps)") {
  if (args.size() != 1) return 2;
  return probe::report(::setxattr(args[0].c_str(), "user.oishell", "x", 1, 0));
}
