#pragma once
// The messages between the supervisor and sandbox init over their SOCK_SEQPACKET socket: one message per packet in
// the byte format of base/wire.h (both ends are this binary), descriptors alongside (SCM_RIGHTS,
// runtime/fd_passing.h).
//
//   supervisor -> init   spec          data = the part of the compiled policy init applies (runtime/init_spec_codec.h)
//                        joined        init is in the limits' cgroups; data = the seccomp program (BPF),
//                                      number = 1 when it reports through user notification, strings = the
//                                      rlimits to set ("RESOURCE SOFT HARD"). Prepared while init builds its
//                                      mount tree (the cgroup write waits for an RCU grace period and the
//                                      compile takes a millisecond, so both are overlapped)
//                        spawn         id, argv, env, cwd; fds: stdin, stdout, stderr, then the extra fds
//                        signal        id, number = signal (to the process group)
//   init -> supervisor   fail          step, message: sealing failed; init exits
//                        listeners     strings = protocol per fd ("http" | "socks5"); fds: the listening sockets
//                        ready         number = Landlock ABI, strings = degradations; fds: the seccomp notify fd
//                        spawned       id, number = pid (in the sandbox)
//                        spawn_failed  id, number = errno, step ("exec" | "cwd"), message
//                        exited        id, number = wait status
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace oishell::control {

enum class Kind { spec, joined, spawn, signal, fail, listeners, ready, spawned, spawn_failed, exited };

struct ControlMessage {
  Kind kind = Kind::spec;
  uint64_t id = 0;
  int number = 0;
  std::vector<std::string> argv;
  std::vector<std::string> env;      // "KEY=value"
  std::vector<std::string> strings;
  std::string cwd;
  std::string step;
  std::string message;
  std::string data;  // binary
};

std::string encode(const ControlMessage& message);
Result<ControlMessage> decode(const std::string& payload);

}  // namespace oishell::control
