#pragma once
// The broker's state for one brokered call, shared by broker.cc and broker_udp.cc (not part of the broker's API).
#include <linux/seccomp.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "policy/net_rules.h"
#include "runtime/broker/broker.h"
#include "runtime/broker/caller.h"
#include "runtime/relay/event_loop.h"

namespace oishell::broker {

using relay::Clock;

struct Broker::Request {
  uint64_t key = 0;
  seccomp_notif n{};
  std::optional<Caller> caller;
  UniqueFd sock;  // the caller's socket (a duplicate: the same open file description)
  int callers_fd = -1;
  int domain = 0;
  int type = 0;
  sockaddr_storage addr{};
  socklen_t addrlen = 0;
  bool fast_open = false;  // a send that connects: answer the bytes sent
  std::string data;
  int callers_file_flags = 0;  // F_GETFL's, read once
  bool callers_nonblocking = false;
  bool callers_cloexec = false;
  enum class Wait { none, callers_socket, own_socket, unix_retry, resolving } wait = Wait::none;
  Clock::time_point deadline;
  Clock::time_point retry_until;
  std::string host;
  uint16_t port = 0;
  std::string rule;
  std::vector<IpAddress> candidates;
  size_t next = 0;
  UniqueFd own;
  ino_t own_inode = 0;  // own's, for InstalledSockets (read off the caller's wait: Broker::take_tcp_socket)
  std::string address;
  std::string last_error;
  std::string join_client;
  int registered = -1;  // the fd registered with the loop
};

namespace detail {
// `ip` at `port` as a sockaddr of `family` (an IPv4 address in an AF_INET6 socket: IPv4-mapped); its length.
socklen_t to_sockaddr(const IpAddress& ip, uint16_t port, int family, sockaddr_storage* ss);
// The devices of `paths` beneath `root_fd` (inside it, no symlinks), those that exist (broker_unix.cc).
std::vector<dev_t> own_tmpfs_devices(int root_fd, const std::vector<std::string>& paths);
}  // namespace detail

}  // namespace oishell::broker
