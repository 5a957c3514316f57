#pragma once
// The sandbox's filesystem: SandboxSpec::mounts applied on a new tmpfs root, then pivot_root.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"

namespace oishell {

// Precondition: the calling process is alone in a new mount namespace (and user namespace) with the host's
// tree still visible, and is pid 1 of a new pid namespace (for the fresh /proc).
// Steps, in order: make every mount private; open every bind source as O_PATH and clone its tree (before
// anything is mounted, so no later mount can change what a source names); mount the tmpfs root; apply the
// steps of spec.mounts in order (binds, tmpfs, proc, dev, hide, protect); make the root read-only; pivot_root
// into it and detach the old root. Afterwards only the policy's paths exist.
// `supervisor_trees`: for a root caller, one tree per step for which takes_supervisor_tree() holds, in order,
// id-mapped where the sandbox writes as the caller (runtime/outside/idmapped_binds.h), attached instead of a clone
// made here; empty otherwise.
// Every tmpfs has a size: /tmp, a tmpfs home and /dev/shm are directories of one scratch tmpfs of
// scratch_tmpfs_bytes(spec) (together they stay within the memory limit, with or without cgroups: ENOSPC, not
// host memory pressure), and the root, /dev and hidden directories are small and read-only (/dev from when it is
// complete).
// A proc step with a `source` (`process.own_proc: best_effort`) whose fresh procfs the kernel refuses with EPERM
// (a container that masks parts of its /proc) binds `source` instead (bind_host_proc) and appends
// kSharedProcLoss to `degraded`.
Status apply_mount_plan(const SandboxSpec& spec, std::vector<UniqueFd> supervisor_trees,
                        std::vector<std::string>* degraded);

// The scratch tmpfs's size: three quarters of the memory limit, else half of the host's RAM (the kernel's default
// for one tmpfs).
uint64_t scratch_tmpfs_bytes(const SandboxSpec& spec);
// Its inode count: one per 16 KiB of its size, at least 8192 (each costs kernel memory its size does not count).
uint64_t scratch_tmpfs_inodes(uint64_t bytes);

// Mounts the minimal /dev at `target_fd` (a directory in the new root): null zero full random urandom tty bound
// from the host, a new devpts instance with ptmx, `shm_tree` (a directory of the scratch tmpfs) at /dev/shm, and
// the fd/stdin/stdout/stderr links; the /dev tmpfs itself is then read-only.
Status mount_minimal_dev(int target_fd, int shm_tree);

// Mounts a fresh procfs (this pid namespace) at `target_fd`, with sys, sysrq-trigger, irq and bus read-only.
Status mount_fresh_proc(int target_fd);

// Binds the procfs at host path `source` (the container's /proc, in the namespace's view before pivot_root) at
// `target_fd`: recursively, so the container's masks come along (the kernel keeps them locked in a user
// namespace), and read-only, nosuid, nodev, noexec throughout.
Status bind_host_proc(const std::string& source, int target_fd);

// What the sandbox loses with bind_host_proc, as `ready` reports it.
inline constexpr std::string_view kSharedProcLoss =
    "proc: the container masks parts of /proc, so the kernel refuses the sandbox a /proc of its own; it has the "
    "container's (read-only, its masks kept): the pod's other processes are listed, with their command lines, and "
    "/proc/<pid> numbers are the container's, not the sandbox's (/proc/self is right); their memory, environment and "
    "files stay closed (Landlock's ptrace scope: without Landlock the sandbox does not start) and signals cannot "
    "reach them (pid namespace)";

}  // namespace oishell
