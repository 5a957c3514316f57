#pragma once
// SCM_RIGHTS: one message with a payload and up to kMaxPassedFds descriptors over a SOCK_SEQPACKET socket.
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell {

// A root caller's binds go in one message (one tree each, runtime/outside/idmapped_binds.h): 16 was reached by 16
// read_only paths. The kernel takes up to SCM_MAX_FD (253) per message.
inline constexpr size_t kMaxPassedFds = 192;  // and the payload's memfd: kMaxAttachedFds (base/scm_rights.h)
// A payload up to this size travels in the packet itself; a larger one (a spawn request with a large environment, a
// policy with a large file step such as a trust bundle) in a sealed memfd passed with it: a unix socket cannot
// carry a packet larger than its send buffer (about 208 KiB by default, raised only with CAP_NET_ADMIN).
inline constexpr size_t kInlineMessageBytes = 128 * 1024;
// The largest payload either side sends or accepts.
inline constexpr size_t kMaxMessageBytes = 16 * 1024 * 1024;

// Sends `payload` with duplicates of `fds` (the caller keeps its own). Never raises SIGPIPE. Each packet starts with
// one byte that says where the payload is: 'i' after it, 'm' in the last descriptor, a sealed memfd.
Status send_message(int socket, const std::string& payload, const std::vector<int>& fds = {});

struct Message {
  std::string payload;
  std::vector<UniqueFd> fds;  // received O_CLOEXEC
};

// Blocks for one message. An empty optional-like result: payload empty and no fds means the peer closed.
// A truncated message (payload or fds) is an error, and any fds that did arrive are closed. One receiver per
// socket at a time (the packet's length is read before the packet).
Result<Message> receive_message(int socket);

}  // namespace oishell
