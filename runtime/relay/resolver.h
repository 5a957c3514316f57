#pragma once
// Asynchronous name resolution with c-ares, driven by the relay's event loop (the loop never blocks on DNS).
// c-ares' sockets are registered level-triggered under tags with kResolverTagBit set.
#include <ares.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/net_rules.h"
#include "runtime/relay/event_loop.h"

namespace oishell::relay {

class Resolver {
 public:
  // Addresses in the order the resolver gave them, or the failure, whose errno_value() says what it was: ENOENT
  // the name does not exist (NXDOMAIN), ENODATA it exists without an address, ETIMEDOUT no answer, 0 otherwise.
  using Callback = std::function<void(Result<std::vector<IpAddress>>)>;
  static constexpr uint64_t kResolverTagBit = uint64_t{1} << 62;

  static Result<std::unique_ptr<Resolver>> create(EventLoop& loop);
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  // May call `done` before returning: a localhost name (is_localhost_name: the loopback, not asked), an /etc/hosts hit.
  void resolve(const std::string& name, Callback done);
  // An epoll event on one of c-ares' sockets.
  void on_event(int fd, uint32_t events);
  // Lets c-ares handle its timeouts; call when next_timeout_ms() has passed.
  void on_timeout();
  // -1 when no query is outstanding.
  int next_timeout_ms();

 private:
  explicit Resolver(EventLoop& loop) : loop_(loop) {}
  static void socket_state(void* self, ares_socket_t fd, int readable, int writable);
  static void on_result(void* arg, int status, int timeouts, struct ares_addrinfo* result);

  EventLoop& loop_;
  ares_channel channel_ = nullptr;
  std::set<int> registered_;
  bool destroying_ = false;
  int outstanding_ = 0;
};

}  // namespace oishell::relay
