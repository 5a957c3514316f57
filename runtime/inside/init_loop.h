#pragma once
// Sandbox init after sealing: start processes on request (each the leader of a new process group), report their
// exits, reap every other process of the pid namespace. Exits when the supervisor's end of the socket closes,
// which, as init is pid 1, kills everything in the sandbox.
namespace oishell {

[[noreturn]] void run_init_loop(int control_fd);

}  // namespace oishell
