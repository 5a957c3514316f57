#pragma once
// User namespace set-up, supervisor side.
#include <sys/types.h>

#include "base/status.h"

namespace oishell {

// Writes "deny" to /proc/PID/setgroups, then maps `uid` and `gid` (the caller's) to themselves in the user
// namespace of `pid`. Works unprivileged (a single self-mapping) and as root.
Status write_id_maps(pid_t pid, uid_t uid, gid_t gid);

}  // namespace oishell
