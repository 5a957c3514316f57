// The DNS stub on a real event loop, with real UDP and TCP sockets on 127.0.0.1 (and ::1 where the host has it),
// answering from a NetworkSpec; names are looked up through a fake resolver that records every name it is asked,
// so that the tests can prove which names never left the stub (denied, ask, pinned, PTR, other types).
#include "runtime/broker/dns_stub.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <map>
#include <mutex>

#include "dns_test_util.h"

namespace oishell::broker {
namespace {

using namespace testing;
using relay::Clock;

constexpr int kA = dns::rrtype::a;
constexpr int kAaaa = dns::rrtype::aaaa;

class Recorder final : public EventSink {
 public:
  void emit(const nlohmann::json& event) override {
    std::lock_guard lock(mu_);
    events_.push_back(event);
  }
  std::vector<nlohmann::json> named(const std::string& name) {
    std::lock_guard lock(mu_);
    std::vector<nlohmann::json> out;
    for (const auto& e : events_) {
      if (e.value("event", "") == name) out.push_back(e);
    }
    return out;
  }
  size_t size() {
    std::lock_guard lock(mu_);
    return events_.size();
  }

 private:
  std::mutex mu_;
  std::vector<nlohmann::json> events_;
};

// Records every name; answers from `addresses` / `errors` (unknown names: ENOENT), at once or when told.
struct FakeResolver {
  std::vector<std::string> asked;
  std::map<std::string, std::vector<IpAddress>> addresses;
  std::map<std::string, int> errors;  // name -> errno of the failure
  bool defer = false;
  std::vector<std::pair<std::string, DnsStub::ResolveDone>> deferred;

  void resolve(const std::string& name, DnsStub::ResolveDone done) {
    asked.push_back(name);
    if (defer) {
      deferred.emplace_back(name, std::move(done));
      return;
    }
    answer(name, done);
  }
  void answer(const std::string& name, const DnsStub::ResolveDone& done) {
    if (auto it = addresses.find(name); it != addresses.end()) return done(it->second);
    auto it = errors.find(name);
    int err = it == errors.end() ? ENOENT : it->second;
    done(Status::error_with_errno(err, "cannot resolve: fake " + std::to_string(err)));
  }
  void release_all() {
    auto batch = std::move(deferred);
    deferred.clear();
    for (auto& [name, done] : batch) answer(name, done);
  }
  size_t count(const std::string& name) const { return static_cast<size_t>(std::count(asked.begin(), asked.end(), name)); }
};

struct Endpoint {
  UniqueFd fd;
  sockaddr_storage addr{};
  socklen_t len = 0;
};

// A socket of `type` bound to `ip` port 0 (a listener for TCP); addr is where it ended up.
Endpoint bind_socket(int type, const char* ip_text) {
  Endpoint e;
  auto address = IpAddress::parse(ip_text);
  bool v6 = address->family == IpAddress::Family::v6;
  e.fd = UniqueFd(::socket(v6 ? AF_INET6 : AF_INET, type | SOCK_CLOEXEC, 0));
  if (v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&e.addr);
    in6->sin6_family = AF_INET6;
    std::memcpy(&in6->sin6_addr, address->bytes.data(), 16);
    e.len = sizeof *in6;
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&e.addr);
    in->sin_family = AF_INET;
    std::memcpy(&in->sin_addr, address->bytes.data(), 4);
    e.len = sizeof *in;
  }
  if (::bind(e.fd.get(), reinterpret_cast<sockaddr*>(&e.addr), e.len) != 0 ||
      (type == SOCK_STREAM && ::listen(e.fd.get(), 16) != 0) ||
      ::getsockname(e.fd.get(), reinterpret_cast<sockaddr*>(&e.addr), &e.len) != 0) {
    e.fd.reset();
  }
  return e;
}

class DnsStubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = relay::EventLoop::create();
    ASSERT_TRUE(created.is_ok()) << created.status().message();
    loop_.emplace(std::move(*created));
    spec_.mode = NetMode::proxy;
    spec_.allow.push_back(*HostRule::parse("allowed.example"));
    spec_.allow.push_back(*HostRule::parse("*.wild.example:443"));  // a port does not matter to DNS
    spec_.allow.push_back(*HostRule::parse("private.example"));
    spec_.allow.push_back(*HostRule::parse("mixed.example"));
    spec_.allow.push_back(*HostRule::parse("v6only.example"));
    spec_.allow.push_back(*HostRule::parse("pinned.example"));
    spec_.deny.push_back(*HostRule::parse("blocked.wild.example"));
    spec_.hosts["pinned.example"] = "127.0.0.2";
    spec_.allow_private.push_back(*Cidr::parse("127.0.0.0/8"));
    resolver_.addresses["allowed.example"] = {ip("93.184.215.14"), ip("2606:2800:21f:cb07:6820:80da:af6b:8b2c")};
    resolver_.addresses["a.wild.example"] = {ip("93.184.215.15")};
    resolver_.addresses["private.example"] = {ip("10.1.2.3"), ip("fd00::1")};
    resolver_.addresses["mixed.example"] = {ip("10.1.2.3"), ip("2606:2800:21f:cb07:6820:80da:af6b:8b2c")};
    resolver_.addresses["v6only.example"] = {ip("2606:2800:21f:cb07:6820:80da:af6b:8b2c")};
  }

  void start(DnsStubOptions options = {}) {
    stub_ = std::make_unique<DnsStub>(*loop_, spec_, names_, events_, [this](const std::string& name, DnsStub::ResolveDone done) {
      resolver_.resolve(name, std::move(done));
    }, options);
    Endpoint udp = bind_socket(SOCK_DGRAM, "127.0.0.1");
    Endpoint tcp = bind_socket(SOCK_STREAM, "127.0.0.1");
    ASSERT_TRUE(udp.fd && tcp.fd);
    udp_addr_ = udp.addr;
    udp_len_ = udp.len;
    tcp_addr_ = tcp.addr;
    tcp_len_ = tcp.len;
    std::vector<UniqueFd> udps, tcps;
    udps.push_back(std::move(udp.fd));
    tcps.push_back(std::move(tcp.fd));
    Endpoint udp6 = bind_socket(SOCK_DGRAM, "::1");
    if (udp6.fd) {
      udp6_addr_ = udp6.addr;
      udp6_len_ = udp6.len;
      udps.push_back(std::move(udp6.fd));
    }
    Status served = stub_->serve(std::move(udps), std::move(tcps));
    ASSERT_TRUE(served.is_ok()) << served.message();
  }

  // Runs the loop (as the relay does) until `done()` or `timeout_ms`.
  template <typename Done>
  bool pump(Done done, int timeout_ms = 3000) {
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!done()) {
      if (Clock::now() > deadline) return false;
      int wait = stub_->next_timeout_ms();
      if (wait < 0 || wait > 20) wait = 20;
      epoll_event events[16];
      auto n = loop_->wait(wait, events, 16);
      if (!n) return false;
      for (int i = 0; i < *n; ++i) {
        if (DnsStub::owns(events[i].data.u64)) stub_->on_event(events[i].data.u64, events[i].events);
      }
      stub_->on_timer();
    }
    return true;
  }

  UniqueFd udp_client(bool v6 = false) {
    UniqueFd fd(::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    const auto* addr = reinterpret_cast<const sockaddr*>(v6 ? &udp6_addr_ : &udp_addr_);
    EXPECT_EQ(0, ::connect(fd.get(), addr, v6 ? udp6_len_ : udp_len_));
    return fd;
  }

  // One datagram back on `fd`, pumping the loop meanwhile; empty after `timeout_ms`.
  std::optional<std::vector<uint8_t>> receive(int fd, int timeout_ms = 3000) {
    std::vector<uint8_t> buffer(65536);
    ssize_t got = -1;
    pump([&] {
      got = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
      return got >= 0;
    }, timeout_ms);
    if (got < 0) return std::nullopt;
    buffer.resize(static_cast<size_t>(got));
    return buffer;
  }

  std::optional<Response> ask(const QuerySpec& q, bool v6 = false) {
    UniqueFd fd = udp_client(v6);
    auto bytes = make_query(q);
    EXPECT_EQ(static_cast<ssize_t>(bytes.size()), ::send(fd.get(), bytes.data(), bytes.size(), 0));
    auto reply = receive(fd.get());
    if (!reply) return std::nullopt;
    return parse_response(*reply);
  }
  std::optional<Response> ask(const std::string& name, uint16_t type = kA) { return ask(QuerySpec{.name = name, .type = type}); }

  UniqueFd tcp_client() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_EQ(0, ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&tcp_addr_), tcp_len_));
    return fd;
  }

  // Reads one framed answer from a TCP client (pumping); empty on EOF or timeout.
  std::optional<std::vector<uint8_t>> read_frame(int fd, std::vector<uint8_t>& buffer, bool* eof = nullptr) {
    std::optional<std::vector<uint8_t>> frame;
    pump([&] {
      uint8_t chunk[4096];
      ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n == 0 && eof) *eof = true;
      if (n > 0) buffer.insert(buffer.end(), chunk, chunk + n);
      if (buffer.size() >= 2) {
        size_t len = (size_t{buffer[0]} << 8) | buffer[1];
        if (buffer.size() >= 2 + len) {
          frame.emplace(buffer.begin() + 2, buffer.begin() + 2 + static_cast<long>(len));
          buffer.erase(buffer.begin(), buffer.begin() + 2 + static_cast<long>(len));
          return true;
        }
      }
      return n == 0;
    });
    return frame;
  }

  static std::vector<uint8_t> framed(const std::vector<uint8_t>& m) {
    std::vector<uint8_t> out = {static_cast<uint8_t>(m.size() >> 8), static_cast<uint8_t>(m.size())};
    out.insert(out.end(), m.begin(), m.end());
    return out;
  }

  std::optional<relay::EventLoop> loop_;
  NetworkSpec spec_;
  NameMap names_;
  Recorder events_;
  FakeResolver resolver_;
  std::unique_ptr<DnsStub> stub_;
  sockaddr_storage udp_addr_{}, tcp_addr_{}, udp6_addr_{};
  socklen_t udp_len_ = 0, tcp_len_ = 0, udp6_len_ = 0;
};

TEST_F(DnsStubTest, AllowedNameGetsItsSyntheticAddressAfterARealLookup) {
  start();
  auto a = ask("allowed.example");
  ASSERT_TRUE(a);
  EXPECT_EQ(0, a->rcode);
  EXPECT_EQ("198.18.0.1", a->address());  // never the real 93.184.215.14
  EXPECT_EQ(60u, a->answers.at(0).ttl);
  EXPECT_TRUE(a->ra());
  auto aaaa = ask("Allowed.Example.", kAaaa);  // any case, trailing dot: the same name
  ASSERT_TRUE(aaaa);
  EXPECT_EQ("fd6f:6973:6865:6c6c::c612:1", aaaa->address());
  EXPECT_EQ(2u, resolver_.count("allowed.example"));
  EXPECT_EQ("allowed.example", names_.name_of(ip("198.18.0.1")));
  auto wild = ask("a.wild.example");  // `*.wild.example:443`: a name has no port
  EXPECT_EQ("198.18.0.2", wild->address());
  EXPECT_TRUE(events_.named("net.denied").empty());
}

TEST_F(DnsStubTest, AAndAaaaShareOneLookup) {
  start();
  resolver_.defer = true;
  UniqueFd c4 = udp_client(), c6 = udp_client();
  auto q4 = make_query({.id = 1, .name = "allowed.example", .type = kA});
  auto q6 = make_query({.id = 2, .name = "allowed.example", .type = kAaaa});
  ::send(c4.get(), q4.data(), q4.size(), 0);
  ::send(c6.get(), q6.data(), q6.size(), 0);
  ASSERT_TRUE(pump([&] { return stub_->pending_queries() == 2; }));
  EXPECT_EQ(1u, resolver_.asked.size());
  resolver_.release_all();
  stub_->run_completions();
  auto r4 = receive(c4.get()), r6 = receive(c6.get());
  ASSERT_TRUE(r4 && r6);
  EXPECT_EQ("198.18.0.1", parse_response(*r4)->address());
  EXPECT_EQ("fd6f:6973:6865:6c6c::c612:1", parse_response(*r6)->address());
  EXPECT_EQ(0u, stub_->pending_queries());
}

TEST_F(DnsStubTest, DeniedNameIsNxdomainWithoutUpstreamQueryAndReported) {
  start();
  auto unlisted = ask("other.example");
  ASSERT_TRUE(unlisted);
  EXPECT_EQ(3, unlisted->rcode);  // NXDOMAIN: getaddrinfo says EAI_NONAME at once, no retry elsewhere
  EXPECT_TRUE(unlisted->answers.empty());
  auto ruled = ask("blocked.wild.example", kAaaa);
  EXPECT_EQ(3, ruled->rcode);
  auto mx = ask("other.example", dns::rrtype::mx);  // every type of a denied name
  EXPECT_EQ(3, mx->rcode);
  EXPECT_TRUE(resolver_.asked.empty()) << resolver_.asked.front();
  auto denied = events_.named("net.denied");
  ASSERT_EQ(2u, denied.size());  // other.example once (A and MX within 2 s), blocked.wild.example once
  EXPECT_EQ("dns", denied[0]["protocol"]);
  EXPECT_EQ("other.example", denied[0]["host"]);
  EXPECT_EQ(0, denied[0]["port"]);
  EXPECT_EQ("denied by policy", denied[0]["reason"]);
  EXPECT_EQ("on_unlisted: deny", denied[0]["rule"]);
  EXPECT_EQ("blocked.wild.example", denied[1]["host"]);
  EXPECT_EQ("deny blocked.wild.example", denied[1]["rule"]);
  EXPECT_EQ(0u, names_.size());  // nothing was given an address
}

TEST_F(DnsStubTest, RepeatedDenialsAreReportedOncePerWindow) {
  start({.denial_repeat_ms = 200});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(3, ask("other.example")->rcode);
  EXPECT_EQ(1u, events_.named("net.denied").size());
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(3, ask("other.example", kAaaa)->rcode);
  EXPECT_EQ(2u, events_.named("net.denied").size());
}

TEST_F(DnsStubTest, AskNameGetsASyntheticAddressWithoutAnyUpstreamQuery) {
  spec_.on_unlisted = OnUnlisted::ask;
  start();
  auto a = ask("unlisted.example");
  ASSERT_TRUE(a);
  EXPECT_EQ(0, a->rcode);
  EXPECT_EQ("198.18.0.1", a->address());
  auto aaaa = ask("unlisted.example", kAaaa);
  EXPECT_EQ("fd6f:6973:6865:6c6c::c612:1", aaaa->address());
  auto txt = ask("unlisted.example", dns::rrtype::txt);
  EXPECT_EQ(0, txt->rcode);
  EXPECT_TRUE(txt->answers.empty());
  EXPECT_TRUE(resolver_.asked.empty());  // the question comes at connect time, with the port
  EXPECT_EQ(0u, events_.size());
  EXPECT_EQ(3, ask("blocked.wild.example")->rcode);  // deny rules still win over ask
}

// RFC 6761: localhost names are the loopback, answered by the stub itself whatever the policy (here every unlisted
// name is denied and reported), as /etc/hosts answers them on most hosts. A machine without an /etc/hosts entry
// (Debian's guests of tools/kernels) got a synthetic address for "localhost" before, sent out through the broker.
// The neighbour: an unlisted name under another top-level domain is still denied.
TEST_F(DnsStubTest, LocalhostNamesAreTheSandboxsOwnLoopback) {
  spec_.on_unlisted = OnUnlisted::deny;
  start();
  for (const char* name : {"localhost", "LocalHost.", "db.localhost"}) {
    auto a = ask(name);
    ASSERT_TRUE(a) << name;
    EXPECT_EQ(0, a->rcode) << name;
    EXPECT_EQ("127.0.0.1", a->address()) << name;
    auto aaaa = ask(name, kAaaa);
    ASSERT_TRUE(aaaa) << name;
    EXPECT_EQ("::1", aaaa->address()) << name;
    auto txt = ask(name, dns::rrtype::txt);
    EXPECT_EQ(0, txt->rcode) << name;
    EXPECT_TRUE(txt->answers.empty()) << name;
  }
  EXPECT_TRUE(resolver_.asked.empty());
  EXPECT_EQ(0u, events_.size());
  EXPECT_EQ(3, ask("localhost.example")->rcode);  // not a localhost name: the policy's (denied)
}

TEST_F(DnsStubTest, PinnedHostIsNotLookedUp) {
  start();
  auto a = ask("pinned.example");
  ASSERT_TRUE(a);
  EXPECT_EQ("198.18.0.1", a->address());
  auto aaaa = ask("pinned.example", kAaaa);  // pinned to an IPv4 address: no AAAA
  EXPECT_EQ(0, aaaa->rcode);
  EXPECT_TRUE(aaaa->answers.empty());
  EXPECT_TRUE(resolver_.asked.empty());
}

TEST_F(DnsStubTest, PinnedPrivateAddressStillPassesTheGuard) {
  spec_.allow_private.clear();
  start();
  auto a = ask("pinned.example");
  EXPECT_EQ(5, a->rcode);  // REFUSED: 127.0.0.2 is loopback and no longer allowed
  EXPECT_TRUE(resolver_.asked.empty());
  auto denied = events_.named("net.denied");
  ASSERT_EQ(1u, denied.size());
  EXPECT_EQ("private-address guard", denied[0]["rule"]);
}

TEST_F(DnsStubTest, GuardRefusesPrivateResults) {
  start();
  auto a = ask("private.example");
  ASSERT_TRUE(a);
  EXPECT_EQ(5, a->rcode);  // every address (10.1.2.3, fd00::1) refused
  EXPECT_TRUE(a->answers.empty());
  auto denied = events_.named("net.denied");
  ASSERT_EQ(1u, denied.size());
  EXPECT_EQ("dns", denied[0]["protocol"]);
  EXPECT_EQ("private.example", denied[0]["host"]);
  EXPECT_EQ(0, denied[0]["port"]);
  EXPECT_EQ("private-address guard", denied[0]["rule"]);
  EXPECT_NE(std::string::npos, denied[0]["reason"].get<std::string>().find("10.1.2.3")) << denied[0];
  // One family refused, the other fine: the refused family has no data, the other its synthetic address.
  auto mixed_a = ask("mixed.example");
  EXPECT_EQ(0, mixed_a->rcode);
  EXPECT_TRUE(mixed_a->answers.empty());
  auto mixed_aaaa = ask("mixed.example", kAaaa);
  EXPECT_EQ("fd6f:6973:6865:6c6c::c612:1", mixed_aaaa->address());
  EXPECT_EQ(1u, events_.named("net.denied").size());
}

TEST_F(DnsStubTest, ResolutionOutcomes) {
  resolver_.errors["gone.example"] = ENOENT;
  resolver_.errors["empty.example"] = ENODATA;
  resolver_.errors["broken.example"] = ECONNREFUSED;
  spec_.allow_all = true;
  start();
  EXPECT_EQ(3, ask("gone.example")->rcode);    // NXDOMAIN
  auto empty = ask("empty.example");           // NODATA
  EXPECT_EQ(0, empty->rcode);
  EXPECT_TRUE(empty->answers.empty());
  EXPECT_EQ(2, ask("broken.example")->rcode);  // SERVFAIL
  auto v4 = ask("v6only.example");             // exists, no IPv4 address
  EXPECT_EQ(0, v4->rcode);
  EXPECT_TRUE(v4->answers.empty());
  EXPECT_EQ("fd6f:6973:6865:6c6c::c612:1", ask("v6only.example", kAaaa)->address());
  auto errors = events_.named("net.error");
  ASSERT_EQ(1u, errors.size());
  EXPECT_EQ("broken.example", errors[0]["host"]);
  EXPECT_TRUE(events_.named("net.denied").empty());
}

TEST_F(DnsStubTest, ResolutionTimeoutIsServfail) {
  resolver_.defer = true;
  start({.resolve_timeout_ms = 100});
  auto started = Clock::now();
  auto a = ask("allowed.example");
  ASSERT_TRUE(a);
  EXPECT_EQ(2, a->rcode);
  EXPECT_GE(Clock::now() - started, std::chrono::milliseconds(100));
  EXPECT_EQ(0u, stub_->pending_queries());
  resolver_.release_all();  // the late answer is dropped
  stub_->run_completions();
  EXPECT_EQ(0u, names_.size());
}

TEST_F(DnsStubTest, PendingQueriesAreBounded) {
  resolver_.defer = true;
  spec_.allow_all = true;
  start({.max_pending = 2});
  UniqueFd c1 = udp_client(), c2 = udp_client(), c3 = udp_client();
  auto send = [](int fd, const std::string& name) {
    auto q = make_query({.name = name});
    ::send(fd, q.data(), q.size(), 0);
  };
  send(c1.get(), "one.example");
  send(c2.get(), "two.example");
  ASSERT_TRUE(pump([&] { return stub_->pending_queries() == 2; }));
  send(c3.get(), "three.example");
  auto refused = receive(c3.get());
  ASSERT_TRUE(refused);
  EXPECT_EQ(2, parse_response(*refused)->rcode);  // SERVFAIL at once: the client may retry
  EXPECT_EQ(2u, resolver_.asked.size());
}

TEST_F(DnsStubTest, PtrAnswersOnlySyntheticAddresses) {
  start();
  ASSERT_EQ("198.18.0.1", ask("allowed.example")->address());
  ASSERT_EQ("fd6f:6973:6865:6c6c::c612:1", ask("allowed.example", kAaaa)->address());
  size_t lookups = resolver_.asked.size();
  auto ptr = ask(dns::reverse_name(ip("198.18.0.1")), dns::rrtype::ptr);
  ASSERT_TRUE(ptr);
  EXPECT_EQ(0, ptr->rcode);
  ASSERT_EQ(1u, ptr->answers.size());
  EXPECT_EQ("allowed.example", ptr->answers[0].ptr_name);
  auto ptr6 = ask(dns::reverse_name(ip("fd6f:6973:6865:6c6c::c612:1")), dns::rrtype::ptr);
  EXPECT_EQ("allowed.example", ptr6->answers.at(0).ptr_name);
  EXPECT_EQ(3, ask(dns::reverse_name(ip("198.18.0.2")), dns::rrtype::ptr)->rcode);     // not given out
  EXPECT_EQ(3, ask(dns::reverse_name(ip("93.184.215.14")), dns::rrtype::ptr)->rcode);  // a real address
  EXPECT_EQ(3, ask("18.198.in-addr.arpa", dns::rrtype::ptr)->rcode);
  EXPECT_EQ(3, ask(dns::reverse_name(ip("198.18.0.1")), kA)->rcode);
  EXPECT_EQ(lookups, resolver_.asked.size());
  EXPECT_TRUE(events_.named("net.denied").empty());
}

TEST_F(DnsStubTest, OtherTypesOfAllowedNamesHaveNoDataAndNoLookup) {
  start();
  for (uint16_t type : {dns::rrtype::mx, dns::rrtype::txt, dns::rrtype::srv, dns::rrtype::any, dns::rrtype::cname,
                        uint16_t{65}}) {
    auto r = ask("allowed.example", type);
    ASSERT_TRUE(r) << type;
    EXPECT_EQ(0, r->rcode) << type;
    EXPECT_TRUE(r->answers.empty()) << type;
  }
  EXPECT_TRUE(resolver_.asked.empty());
}

TEST_F(DnsStubTest, MalformedAndUnsupportedQueries) {
  start();
  UniqueFd c = udp_client();
  auto exchange = [&](std::vector<uint8_t> m) {
    ::send(c.get(), m.data(), m.size(), 0);
    auto reply = receive(c.get(), 300);
    return reply ? parse_response(*reply) : std::nullopt;
  };
  auto two = make_query({.id = 5, .name = "allowed.example"});
  two[5] = 2;
  auto formerr = exchange(two);
  ASSERT_TRUE(formerr);
  EXPECT_EQ(5, formerr->id);
  EXPECT_EQ(1, formerr->rcode);
  EXPECT_EQ(1, exchange(make_query({.name = "bad!name.example"}))->rcode);      // not a host name
  EXPECT_EQ(1, exchange(make_query({.name = ""}))->rcode);                       // the root
  EXPECT_EQ(3, exchange(make_query({.name = "192.0.2.1"}))->rcode);              // an address as a name
  EXPECT_EQ(4, exchange(make_query({.name = "allowed.example", .opcode = 2}))->rcode);  // STATUS: NOTIMP
  EXPECT_EQ(5, exchange(make_query({.name = "version.bind", .type = 16, .klass = 3}))->rcode);  // CHAOS: REFUSED
  auto badvers = exchange(make_query({.name = "allowed.example", .edns = true, .edns_version = 1}));
  EXPECT_EQ(16, badvers->rcode);
  EXPECT_FALSE(exchange({1, 2, 3}));  // not even a header: no answer
  auto response = make_query({.name = "allowed.example"});
  response[2] |= 0x80;
  EXPECT_FALSE(exchange(response));  // a response: never answered
  EXPECT_TRUE(resolver_.asked.empty());
  EXPECT_EQ("198.18.0.1", ask("allowed.example")->address());  // still serving
}

TEST_F(DnsStubTest, EdnsIsEchoed) {
  start();
  auto r = ask(QuerySpec{.name = "allowed.example", .edns = true, .edns_size = 4096});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->has_opt);
  EXPECT_EQ(1232, r->opt_udp_size);
  EXPECT_EQ("198.18.0.1", r->address());
  auto plain = ask("allowed.example");
  EXPECT_FALSE(plain->has_opt);
}

TEST_F(DnsStubTest, ExhaustedPoolIsServfail) {
  spec_.on_unlisted = OnUnlisted::ask;
  NameMap small(1);
  stub_ = nullptr;
  names_.address_for("first.example", IpAddress::Family::v4);  // the test's own map is not the one used below
  auto stub = std::make_unique<DnsStub>(*loop_, spec_, small, events_, [](const std::string&, DnsStub::ResolveDone) {});
  Endpoint udp = bind_socket(SOCK_DGRAM, "127.0.0.1");
  udp_addr_ = udp.addr;
  udp_len_ = udp.len;
  std::vector<UniqueFd> udps;
  udps.push_back(std::move(udp.fd));
  ASSERT_TRUE(stub->serve(std::move(udps), {}).is_ok());
  stub_ = std::move(stub);
  EXPECT_EQ("198.18.0.1", ask("one.example")->address());
  EXPECT_EQ(2, ask("two.example")->rcode);
  EXPECT_EQ(1u, events_.named("net.error").size());
  EXPECT_EQ("198.18.0.1", ask("one.example")->address());
}

TEST_F(DnsStubTest, Ipv6Socket) {
  start();
  if (udp6_len_ == 0) GTEST_SKIP() << "IPv6 loopback unavailable on the host";
  auto r = ask(QuerySpec{.name = "allowed.example"}, true);
  ASSERT_TRUE(r);
  EXPECT_EQ("198.18.0.1", r->address());
}

TEST_F(DnsStubTest, TcpAnswersSeveralQueriesPerConnection) {
  start();
  UniqueFd c = tcp_client();
  // Two queries in one write, the second split across two more: framing, not segments, delimits them.
  auto q1 = framed(make_query({.id = 1, .name = "allowed.example"}));
  auto q2 = framed(make_query({.id = 2, .name = "other.example"}));
  auto q3 = framed(make_query({.id = 3, .name = "allowed.example", .type = kAaaa}));
  std::vector<uint8_t> first = q1;
  first.insert(first.end(), q2.begin(), q2.end());
  first.insert(first.end(), q3.begin(), q3.begin() + 5);
  ASSERT_EQ(static_cast<ssize_t>(first.size()), ::send(c.get(), first.data(), first.size(), 0));
  std::vector<uint8_t> buffer;
  std::map<int, Response> answers;
  for (int i = 0; i < 2; ++i) {
    auto frame = read_frame(c.get(), buffer);
    ASSERT_TRUE(frame);
    auto r = parse_response(*frame);
    ASSERT_TRUE(r);
    answers[r->id] = *r;
  }
  ::send(c.get(), q3.data() + 5, q3.size() - 5, 0);
  auto frame = read_frame(c.get(), buffer);
  ASSERT_TRUE(frame);
  answers[parse_response(*frame)->id] = *parse_response(*frame);
  EXPECT_EQ("198.18.0.1", answers[1].address());
  EXPECT_EQ(3, answers[2].rcode);
  EXPECT_EQ("fd6f:6973:6865:6c6c::c612:1", answers[3].address());
  EXPECT_EQ(1u, stub_->tcp_connections());
  // The client's EOF: everything answered, the stub closes too.
  ::shutdown(c.get(), SHUT_WR);
  bool eof = false;
  EXPECT_FALSE(read_frame(c.get(), buffer, &eof));
  EXPECT_TRUE(eof);
  EXPECT_EQ(0u, stub_->tcp_connections());
}

TEST_F(DnsStubTest, TcpAnswerAfterEofWhenTheLookupCompletes) {
  resolver_.defer = true;
  start();
  UniqueFd c = tcp_client();
  auto q = framed(make_query({.id = 9, .name = "allowed.example"}));
  ::send(c.get(), q.data(), q.size(), 0);
  ::shutdown(c.get(), SHUT_WR);
  ASSERT_TRUE(pump([&] { return stub_->pending_queries() == 1; }));
  EXPECT_EQ(1u, stub_->tcp_connections());
  resolver_.release_all();
  stub_->run_completions();
  std::vector<uint8_t> buffer;
  auto frame = read_frame(c.get(), buffer);
  ASSERT_TRUE(frame);
  EXPECT_EQ("198.18.0.1", parse_response(*frame)->address());
  EXPECT_TRUE(pump([&] { return stub_->tcp_connections() == 0; }));
}

TEST_F(DnsStubTest, TcpIdleClientsAndZeroLengthFramesAreClosed) {
  start({.tcp_idle_timeout_ms = 150});
  UniqueFd idle = tcp_client();
  ASSERT_TRUE(pump([&] { return stub_->tcp_connections() == 1; }));
  auto started = Clock::now();
  ASSERT_TRUE(pump([&] { return stub_->tcp_connections() == 0; }, 2000));
  EXPECT_GE(Clock::now() - started, std::chrono::milliseconds(100));
  UniqueFd zero = tcp_client();
  uint8_t nothing[2] = {0, 0};
  ::send(zero.get(), nothing, 2, 0);
  ASSERT_TRUE(pump([&] { return stub_->tcp_connections() == 0; }, 1000));
}

TEST_F(DnsStubTest, TcpConnectionsAreBounded) {
  start({.max_tcp_connections = 2});
  UniqueFd c1 = tcp_client(), c2 = tcp_client();
  ASSERT_TRUE(pump([&] { return stub_->tcp_connections() == 2; }));
  UniqueFd c3 = tcp_client();
  std::vector<uint8_t> buffer;
  bool eof = false;
  EXPECT_FALSE(read_frame(c3.get(), buffer, &eof));  // accepted and closed
  EXPECT_TRUE(eof);
  EXPECT_EQ(2u, stub_->tcp_connections());
  auto q = framed(make_query({.id = 4, .name = "allowed.example"}));
  ::send(c1.get(), q.data(), q.size(), 0);  // the others still served
  auto frame = read_frame(c1.get(), buffer);
  ASSERT_TRUE(frame);
  EXPECT_EQ("198.18.0.1", parse_response(*frame)->address());
}

TEST_F(DnsStubTest, TagsAreTheStubsOwn) {
  EXPECT_TRUE(DnsStub::owns(DnsStub::kDnsTagBit | 5));
  EXPECT_FALSE(DnsStub::owns(~uint64_t{0}));            // the relay's wake-up
  EXPECT_FALSE(DnsStub::owns(uint64_t{1} << 63 | 1));   // a relay listener
  EXPECT_FALSE(DnsStub::owns(uint64_t{1} << 62 | 7));   // a c-ares socket
  EXPECT_FALSE(DnsStub::owns(uint64_t{12345} << 2));    // a relay connection
}

}  // namespace
}  // namespace oishell::broker
