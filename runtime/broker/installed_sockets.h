#pragma once
// The TCP sockets the broker installed in the sandbox's processes (rules with `inspect: false`: the supervisor's own
// connected socket put in place of the caller's, bytes kernel to kernel, no relay), by socket inode, so that a
// narrowing of the network policy (relay::Relay::update_network) can end those whose destination it no longer
// allows. The broker keeps no descriptor of them (one would keep a socket the sandbox closed open, and its peer
// waiting for a FIN): they are found when needed in /proc/PID/fd of the processes in the sandbox's pid namespace,
// taken with pidfd_getfd(2) and shut down both ways, so that the program and its peer see the connection end.
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace oishell::broker {

class InstalledSockets {
 public:
  // At most this many are remembered; past it, those the sandbox has closed are forgotten, then the oldest (down to
  // three quarters).
  static constexpr size_t kMax = 4096;

  // `init_pid`: sandbox init (pid 1 of the sandbox's pid namespace), as the supervisor sees it.
  explicit InstalledSockets(pid_t init_pid) : init_pid_(init_pid) {}

  // `inode`: the socket just installed (0: unknown, not remembered); `caller`: the thread it was installed for. No
  // system call: on the connect path.
  void add(ino_t inode, std::string host, uint16_t port, std::string address, pid_t caller);

  struct Closed {
    std::string host;
    uint16_t port = 0;
    std::string reason;
  };
  // Shuts down every remembered socket for which `refusal` gives a reason and that a process of the sandbox still
  // holds; those are forgotten. On the broker's thread.
  std::vector<Closed> close_refused(
      const std::function<std::string(const std::string& host, uint16_t port, const std::string& address)>& refusal);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string host;
    uint16_t port = 0;
    std::string address;
    pid_t caller = 0;
  };
  // The inode of the sandbox's pid namespace: init's, or (init is not dumpable: an unprivileged supervisor may not
  // read its /proc/PID/ns) a caller's that is still alive, never the supervisor's own; 0 when none can be read.
  ino_t sandbox_pid_namespace() const;
  // Where each of `wanted` is open in the sandbox's processes: (pid, fd) pairs.
  std::map<ino_t, std::vector<std::pair<pid_t, int>>> find_open(const std::set<ino_t>& wanted);
  void prune();

  pid_t init_pid_;
  std::map<ino_t, Entry> entries_;
  std::deque<ino_t> order_;  // oldest first
};

}  // namespace oishell::broker
