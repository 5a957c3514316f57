#pragma once
// Raw syscalls live here and only here: thin wrappers for calls glibc 2.36 does not wrap, and the constants newer
// than the installed kernel headers. Each returns what the kernel returned (-1 with errno set on failure).
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/mount.h>  // glibc 2.36: struct mount_attr, OPEN_TREE_*, MOVE_MOUNT_* (conflicts with linux/mount.h)
#include <linux/openat2.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>

// --- Landlock: constants newer than Debian 12's headers (ABI 4..7) ---
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_RULE_NET_PORT
#define LANDLOCK_RULE_NET_PORT 2
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#endif

// --- pidfds: newer than Debian 12's headers ---
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL  // Linux 6.9: a pidfd for a thread, not only a thread-group leader
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

namespace oishell::sys {

// The ruleset attribute of ABI 6+ (handled_access_net since ABI 4, scoped since ABI 6). Older kernels accept a
// shorter size; landlock_create_ruleset() is called with the size matching the ABI in use.
struct LandlockRulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
};
struct LandlockPathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));
struct LandlockNetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

inline int landlock_create_ruleset(const LandlockRulesetAttr* attr, size_t size, uint32_t flags) {
  return static_cast<int>(::syscall(SYS_landlock_create_ruleset, attr, size, flags));
}
inline int landlock_add_rule(int ruleset_fd, int rule_type, const void* rule_attr, uint32_t flags) {
  return static_cast<int>(::syscall(SYS_landlock_add_rule, ruleset_fd, rule_type, rule_attr, flags));
}
inline int landlock_restrict_self(int ruleset_fd, uint32_t flags) {
  return static_cast<int>(::syscall(SYS_landlock_restrict_self, ruleset_fd, flags));
}

// --- processes ---
inline long clone3(struct clone_args* args, size_t size) { return ::syscall(SYS_clone3, args, size); }
inline int pidfd_open(pid_t pid, unsigned int flags) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, flags));
}
inline int pidfd_send_signal(int pidfd, int sig, siginfo_t* info, unsigned int flags) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, info, flags));
}
// A duplicate of another process's fd (Linux 5.6; ptrace access to it needed).
inline int pidfd_getfd(int pidfd, int targetfd, unsigned int flags) {
  return static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, targetfd, flags));
}
inline int close_range(unsigned int first, unsigned int last, unsigned int flags) {
  return static_cast<int>(::syscall(SYS_close_range, first, last, flags));
}

// --- mounts ---
inline int pivot_root(const char* new_root, const char* put_old) {
  return static_cast<int>(::syscall(SYS_pivot_root, new_root, put_old));
}
inline int open_tree(int dirfd, const char* path, unsigned int flags) {
  return static_cast<int>(::syscall(SYS_open_tree, dirfd, path, flags));
}
inline int move_mount(int from_dirfd, const char* from_path, int to_dirfd, const char* to_path, unsigned int flags) {
  return static_cast<int>(::syscall(SYS_move_mount, from_dirfd, from_path, to_dirfd, to_path, flags));
}
inline int mount_setattr(int dirfd, const char* path, unsigned int flags, struct mount_attr* attr, size_t size) {
  return static_cast<int>(::syscall(SYS_mount_setattr, dirfd, path, flags, attr, size));
}
inline int fsopen(const char* fs_name, unsigned int flags) {
  return static_cast<int>(::syscall(SYS_fsopen, fs_name, flags));
}
inline int fsconfig(int fs_fd, unsigned int cmd, const char* key, const void* value, int aux) {
  return static_cast<int>(::syscall(SYS_fsconfig, fs_fd, cmd, key, value, aux));
}
inline int fsmount(int fs_fd, unsigned int flags, unsigned int attr_flags) {
  return static_cast<int>(::syscall(SYS_fsmount, fs_fd, flags, attr_flags));
}

// --- files ---
inline int openat2(int dirfd, const char* path, const struct open_how* how) {
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, how, sizeof(*how)));
}

// --- seccomp (libseccomp covers filters; this is for the notify ioctls' id check) ---
inline int seccomp(unsigned int op, unsigned int flags, void* args) {
  return static_cast<int>(::syscall(SYS_seccomp, op, flags, args));
}

}  // namespace oishell::sys
