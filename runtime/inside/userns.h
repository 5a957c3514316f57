#pragma once
// User namespace set-up. An ordinary caller's init maps itself (write_own_id_maps); a root caller's init is mapped
// by the supervisor (write_root_caller_maps) so that the sandbox is not the host's root (docs/sealing.md, "Root
// callers").
#include <sys/types.h>

#include <cstdint>

#include "base/status.h"

namespace oishell {

// Inside, right after clone: writes "deny" to /proc/self/setgroups, then maps `uid` and `gid` (the supervisor's,
// read before clone: inside, before the maps exist, the process sees the overflow ids) to themselves in the calling
// process's new user namespace. The kernel allows this single self-mapping without any privilege in the parent
// namespace, so it works unprivileged and needs no round trip to the supervisor.
Status write_own_id_maps(uid_t uid, gid_t gid);

// A root caller's sandbox runs as uid and gid 0 inside, but as this id outside (kuid/kgid): an id that owns nothing
// on the host, so root-owned files in the bound system directories and /proc are read with "other" permissions.
// The writable binds (the workspace, read_write paths) are id-mapped (runtime/outside/idmapped_binds.h) so that their
// root-owned files are the sandbox's own and what it creates is owned by root on the host, as before; read-only
// paths are not: their root-only files stay "other" too. The highest
// plausible unused id: 2^31-2, or, when this process's own user namespace does not map it (a container), the
// highest id it maps but one. Error when none is mapped besides 0.
Result<uint32_t> root_caller_outside_id();

// Supervisor side, as root, before init needs its ids: maps 0 inside init's user namespace to `outside_id`, for
// uids and gids ("0 ID 1"). setgroups stays allowed so that init can clear root's supplementary groups.
Status write_root_caller_maps(pid_t init_pid, uint32_t outside_id);

// Inside a root caller's init, once its maps are written: clears the supplementary groups (root's group 0 would
// give group access to root-group files) and becomes uid/gid 0 of its namespace (outside: the unused id), keeping
// its capabilities in the namespace; re-arms what changing credentials resets (the parent-death signal, and
// non-dumpable). Must run single-threaded.
Status become_namespace_root();

}  // namespace oishell
