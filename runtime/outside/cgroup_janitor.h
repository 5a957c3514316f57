#pragma once
// The cgroups of a sandbox outlive a supervisor that is SIGKILLed (nothing in it runs to remove them). The janitor
// is a small process beside the supervisor, outside the sandbox, that waits: told "done" it exits; if instead
// the supervisor disappears, it waits for sandbox init to die (init has PDEATHSIG) and removes the cgroups.
//
// No cgroup exists before the janitor knows it: watch() is called with each directory *before* it is made (the
// first call starts the janitor), so that a supervisor killed at any moment, even inside the mkdir, leaves nothing
// behind. A directory watched but never made (or already removed) is simply not there to remove.
//
// A group that init is born in (clone3 CLONE_INTO_CGROUP, runtime/outside/cgroup_birth.h) is made before init
// exists: the janitor then starts without init's pidfd and is sent it over its socket after the clone
// (follow_init()). A supervisor killed before that leaves the janitor without a pidfd to wait on: it kills the
// group's members itself (cgroup.kill) and removes the group, retrying while the kernel still counts them.
//
// It is cloned with CLONE_VM: it shares the supervisor's address space (which outlives the supervisor for as long
// as the janitor runs) instead of copying it, so starting it costs what starting a thread does and leaves no page
// copy-on-write behind (a fork() here cost ~2.7 ms of `oishell run`). Sharing the address space, it runs on a
// stack of its own, reads only a block of its own (the list of directories, to which the supervisor only appends,
// publishing each entry once it is whole; the janitor reads it only once the supervisor is gone) and makes raw
// system calls only (runtime/sys/raw_syscall.h): no libc, no errno, no allocation. It is put in a process group of
// its own at once, so that a SIGKILL to the supervisor's whole group (timeout(1), a job-control kill) spares it.
#include <sys/types.h>

#include <cstddef>
#include <string>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell {

class CgroupJanitor {
 public:
  CgroupJanitor() = default;
  CgroupJanitor(CgroupJanitor&& other) noexcept { *this = std::move(other); }
  // A janitor already running here is released first.
  CgroupJanitor& operator=(CgroupJanitor&& other) noexcept;
  CgroupJanitor(const CgroupJanitor&) = delete;
  CgroupJanitor& operator=(const CgroupJanitor&) = delete;

  // Records `dir` (not made yet) as the sandbox's; the first call starts the janitor. `init_pidfd` refers to
  // sandbox init, or is -1 before init exists (then follow_init() gives it later). Must be called before `dir` is
  // made. An error (the janitor could not start, too many directories, a path too long) means `dir` must not be
  // made.
  [[nodiscard]] Status watch(int init_pidfd, const std::string& dir);
  // Sends the janitor init's pidfd (a janitor started with -1): from then on, should the supervisor die, it waits
  // for init to die before it removes the groups. Without a janitor running, nothing to do.
  [[nodiscard]] Status follow_init(int init_pidfd);
  bool running() const { return pid_ >= 0; }
  // The supervisor has torn everything down itself: the janitor exits (reaped now if already gone, else by a
  // later release()). Idempotent. `last_reference` (e.g. the sandbox's mount namespace) goes with the word "done":
  // the janitor closes it before it exits, so that what the kernel does when the last reference goes (unmounting
  // every mount of the sandbox) is done beside the supervisor's last steps and its exit, not in them. Without a
  // janitor running, it is given back.
  UniqueFd release(UniqueFd last_reference = {});
  ~CgroupJanitor() { release(); }

 private:
  [[nodiscard]] Status start(int init_pidfd);

  pid_t pid_ = -1;
  void* block_ = nullptr;  // the janitor's own mapping: its arguments and its stack
  size_t block_bytes_ = 0;
  UniqueFd done_;  // the supervisor's end; closing it without a word means "the supervisor died"
};

}  // namespace oishell
