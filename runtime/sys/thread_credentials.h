#pragma once
// Credentials of the calling thread alone. The kernel keeps credentials per thread; libc's setresuid(3) and
// friends make every thread of the process take the same ones (glibc's setxid broadcast), which is what a
// program wants, except for a thread set apart to act with other credentials (runtime/broker/as_sandbox.h): these
// are the system calls themselves, for that thread. Each returns 0 or -1 with errno, like the libc calls.
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace oishell::sys {

inline int thread_setgroups(size_t count, const gid_t* groups) {
  return static_cast<int>(::syscall(SYS_setgroups, count, groups));
}
inline int thread_setresgid(gid_t real, gid_t effective, gid_t saved) {
  return static_cast<int>(::syscall(SYS_setresgid, real, effective, saved));
}
inline int thread_setresuid(uid_t real, uid_t effective, uid_t saved) {
  return static_cast<int>(::syscall(SYS_setresuid, real, effective, saved));
}
// The calling thread's effective, permitted and inheritable sets (pid 0: this thread), 64 bits each.
inline int thread_capset(const __user_cap_data_struct (&data)[2]) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return static_cast<int>(::syscall(SYS_capset, &header, data));
}
inline int thread_capget(__user_cap_data_struct (&data)[2]) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  return static_cast<int>(::syscall(SYS_capget, &header, data));
}

}  // namespace oishell::sys
