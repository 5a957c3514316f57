#pragma once
// User namespace set-up, done by sandbox init itself right after clone.
#include <sys/types.h>

#include "base/status.h"

namespace oishell {

// Writes "deny" to /proc/self/setgroups, then maps `uid` and `gid` (the supervisor's, read before clone: inside,
// before the maps exist, the process sees the overflow ids) to themselves in the calling process's new user
// namespace. The kernel allows this single self-mapping without any privilege in the parent namespace, so it
// works unprivileged and as root alike, and needs no round trip to the supervisor.
Status write_own_id_maps(uid_t uid, gid_t gid);

}  // namespace oishell
