#include "runtime/relay/resolver.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace oishell::relay {
namespace {

struct Query {
  Resolver::Callback done;
  bool* destroying;
  int* outstanding;
};

}  // namespace

Result<std::unique_ptr<Resolver>> Resolver::create(EventLoop& loop) {
  static std::once_flag once;
  static int init_status = ARES_SUCCESS;
  std::call_once(once, [] { init_status = ares_library_init(ARES_LIB_INIT_ALL); });
  if (init_status != ARES_SUCCESS) {
    return Status::error(std::string("ares_library_init: ") + ares_strerror(init_status));
  }
  std::unique_ptr<Resolver> r(new Resolver(loop));
  ares_options options{};
  options.sock_state_cb = &Resolver::socket_state;
  options.sock_state_cb_data = r.get();
  int status = ares_init_options(&r->channel_, &options, ARES_OPT_SOCK_STATE_CB);
  if (status != ARES_SUCCESS) return Status::error(std::string("ares_init_options: ") + ares_strerror(status));
  // OISHELL_DNS_SERVERS ("127.0.0.53:5353,[::1]:53"): the upstream servers instead of /etc/resolv.conf's, for a
  // machine whose supervisor must ask another resolver, and for tests that must see every question asked.
  if (const char* servers = std::getenv("OISHELL_DNS_SERVERS"); servers != nullptr && *servers != '\0') {
    status = ares_set_servers_ports_csv(r->channel_, servers);
    if (status != ARES_SUCCESS) {
      return Status::error(std::string("OISHELL_DNS_SERVERS `") + servers + "`: " + ares_strerror(status));
    }
  }
  return r;
}

Resolver::~Resolver() {
  destroying_ = true;
  if (channel_) ares_destroy(channel_);  // outstanding queries complete with ARES_EDESTRUCTION, ignored
  for (int fd : registered_) loop_.remove(fd);
}

void Resolver::socket_state(void* self_ptr, ares_socket_t fd, int readable, int writable) {
  auto* self = static_cast<Resolver*>(self_ptr);
  if (self->destroying_) return;
  uint32_t events = (readable ? uint32_t{EPOLLIN} : 0u) | (writable ? uint32_t{EPOLLOUT} : 0u);
  uint64_t tag = kResolverTagBit | static_cast<uint32_t>(fd);
  if (events == 0) {
    self->loop_.remove(fd);
    self->registered_.erase(fd);
  } else if (self->registered_.count(fd)) {
    (void)self->loop_.modify(fd, events, tag);
  } else if (self->loop_.add(fd, events, tag).is_ok()) {
    self->registered_.insert(fd);
  }
}

void Resolver::resolve(const std::string& name, Callback done) {
  if (is_localhost_name(name)) {
    done(localhost_addresses());
    return;
  }
  ares_addrinfo_hints hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = ARES_AI_NOSORT;
  ++outstanding_;
  ares_getaddrinfo(channel_, name.c_str(), nullptr, &hints, &Resolver::on_result,
                   new Query{std::move(done), &destroying_, &outstanding_});
}

void Resolver::on_result(void* arg, int status, int /*timeouts*/, struct ares_addrinfo* result) {
  std::unique_ptr<Query> query(static_cast<Query*>(arg));
  --*query->outstanding;
  std::vector<IpAddress> addresses;
  if (status == ARES_SUCCESS && result) {
    for (ares_addrinfo_node* node = result->nodes; node; node = node->ai_next) {
      IpAddress a;
      if (node->ai_family == AF_INET) {
        a.family = IpAddress::Family::v4;
        std::memcpy(a.bytes.data(), &reinterpret_cast<sockaddr_in*>(node->ai_addr)->sin_addr, 4);
      } else if (node->ai_family == AF_INET6) {
        a.family = IpAddress::Family::v6;
        std::memcpy(a.bytes.data(), &reinterpret_cast<sockaddr_in6*>(node->ai_addr)->sin6_addr, 16);
      } else {
        continue;
      }
      if (std::find(addresses.begin(), addresses.end(), a) == addresses.end()) addresses.push_back(a);
    }
  }
  if (result) ares_freeaddrinfo(result);
  if (*query->destroying) return;
  if (status != ARES_SUCCESS) {
    int err = status == ARES_ENOTFOUND || status == ARES_ENONAME ? ENOENT
              : status == ARES_ENODATA                          ? ENODATA
              : status == ARES_ETIMEOUT                         ? ETIMEDOUT
                                                                : 0;
    query->done(Status::error_with_errno(err, std::string("cannot resolve: ") + ares_strerror(status)));
  } else if (addresses.empty()) {
    query->done(Status::error_with_errno(ENODATA, "cannot resolve: no address"));
  } else {
    query->done(std::move(addresses));
  }
}

void Resolver::on_event(int fd, uint32_t events) {
  bool read = events & (EPOLLIN | EPOLLERR | EPOLLHUP);
  bool write = events & (EPOLLOUT | EPOLLERR);
  ares_process_fd(channel_, read ? fd : ARES_SOCKET_BAD, write ? fd : ARES_SOCKET_BAD);
}

void Resolver::on_timeout() { ares_process_fd(channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD); }

int Resolver::next_timeout_ms() {
  if (outstanding_ == 0) return -1;
  timeval tv{};
  timeval* t = ares_timeout(channel_, nullptr, &tv);
  if (!t) return 1000;
  return static_cast<int>(t->tv_sec * 1000 + (t->tv_usec + 999) / 1000);
}

}  // namespace oishell::relay
