#pragma once
// The sandbox's filesystem: SandboxSpec::mounts applied on a new tmpfs root, then pivot_root.
#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell {

// Precondition: the calling process is alone in a new mount namespace (and user namespace) with the host's
// tree still visible, and is pid 1 of a new pid namespace (for the fresh /proc).
// Steps, in order: make every mount private; open every bind source as O_PATH and clone its tree (before
// anything is mounted, so no later mount can change what a source names); mount the tmpfs root; apply the
// steps of spec.mounts in order (binds, tmpfs, proc, dev, hide, protect); make the root read-only; pivot_root
// into it and detach the old root. Afterwards only the policy's paths exist.
Status apply_mount_plan(const SandboxSpec& spec);

// Mounts the minimal /dev at `target_fd` (a directory in the new root): null zero full random urandom tty bound
// from the host, a new devpts instance with ptmx, a tmpfs /dev/shm, and the fd/stdin/stdout/stderr links.
Status mount_minimal_dev(int target_fd);

// Mounts a fresh procfs (this pid namespace) at `target_fd`, with sys, sysrq-trigger, irq and bus read-only.
Status mount_fresh_proc(int target_fd);

}  // namespace oishell
