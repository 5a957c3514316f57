// oishell-live-policy-bench: how long a live network change (Relay::update_network, issue 38) takes on a relay with
// many rules and open tunnels. The relay runs in this process on 127.0.0.1 as in the supervisor; N CONNECT tunnels
// stay open to a holding server on 127.0.0.2 while R changes, each replacing one of the rules, are applied.
//
//   oishell-live-policy-bench [--rules 1000] [--tunnels 20] [--rounds 101]
//
// Prints the median and p99 of the time from the call to the new rules in force (queued on the relay's loop and
// back: includes the loop's wake-up) and of the loop's own work (rules replaced, open connections re-checked).
// Figures are recorded in docs/network.md. A benchmark, run by hand: not a test (a loaded machine moves its figures).
#include <signal.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/relay/bench_net.h"
#include "runtime/relay/relay.h"

namespace {

using namespace oishell;
using namespace oishell::bench;

class NullSink final : public EventSink {
 public:
  void emit(const nlohmann::json&) override {}
};

// Accepts and holds every connection open until the process ends.
void hold_connections(int listener) {
  static std::vector<UniqueFd> held;
  while (true) {
    int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    held.emplace_back(c);
  }
}

NetworkSpec spec_with(const std::vector<std::string>& allow) {
  NetworkSpec spec;
  spec.on_unlisted = OnUnlisted::deny;
  spec.hosts["held.example"] = "127.0.0.2";
  spec.allow_private.push_back(*Cidr::parse("127.0.0.0/8"));
  for (const auto& a : allow) spec.allow.push_back(*HostRule::parse(a));
  return spec;
}

// A CONNECT tunnel through the relay; exits on a refusal (the benchmark's own set-up must work).
UniqueFd open_tunnel(uint16_t relay_port, uint16_t server_port) {
  UniqueFd fd = tcp_connect("127.0.0.1", relay_port);
  std::string authority = "held.example:" + std::to_string(server_port);
  if (!fd || !send_all(fd.get(), "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")) {
    std::fprintf(stderr, "cannot reach the relay\n");
    std::exit(1);
  }
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos && recv(fd.get(), &c, 1, 0) == 1) head += c;
  if (!head.starts_with("HTTP/1.1 200")) {
    std::fprintf(stderr, "the relay refused the benchmark's tunnel: %s\n", head.c_str());
    std::exit(1);
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  int rules = 1000, tunnels = 20, rounds = 101;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--rules") rules = std::atoi(argv[i + 1]);
    else if (a == "--tunnels") tunnels = std::atoi(argv[i + 1]);
    else if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: oishell-live-policy-bench [--rules N] [--tunnels N] [--rounds N]\n");
      return 2;
    }
  }
  if (rules < 1 || tunnels < 0 || rounds < 1) {
    std::fprintf(stderr, "--rules and --rounds take a positive count, --tunnels zero or more\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  uint16_t server_port = 0, relay_port = 0;
  UniqueFd server = tcp_listen("127.0.0.2", server_port);
  std::thread(hold_connections, server.get()).detach();

  std::vector<std::string> allow;
  for (int i = 0; i < rules; ++i) allow.push_back("host" + std::to_string(i) + ".example:443");
  allow.push_back("held.example");
  NullSink sink;
  auto relay = relay::Relay::create(spec_with(allow), sink, nullptr);
  if (!relay) {
    std::fprintf(stderr, "%s\n", relay.status().message().c_str());
    return 1;
  }
  std::vector<relay::Listener> listeners;
  listeners.push_back({tcp_listen("127.0.0.1", relay_port), relay::Protocol::http});
  if (Status s = (*relay)->start(std::move(listeners)); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::vector<UniqueFd> open;
  for (int i = 0; i < tunnels; ++i) open.push_back(open_tunnel(relay_port, server_port));

  std::vector<double> took, work;
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::string> next = allow;
    next[static_cast<size_t>(round % rules)] = "changed" + std::to_string(round) + ".example:443";
    auto update = (*relay)->update_network(spec_with(next));
    if (!update) {
      std::fprintf(stderr, "%s\n", update.status().message().c_str());
      return 1;
    }
    if (update->closed_connections != 0) {
      std::fprintf(stderr, "a change that kept held.example closed %zu tunnels\n",
                   static_cast<size_t>(update->closed_connections));
      return 1;
    }
    took.push_back(static_cast<double>(update->applied_us));
    work.push_back(static_cast<double>(update->work_us));
  }
  std::printf("live change, %d rules, %d open tunnels, %d rounds: in force after median %.0f us (p99 %.0f us); "
              "the loop's own work median %.0f us (p99 %.0f us)\n",
              rules + 1, tunnels, rounds, percentile(took, 0.5), percentile(took, 0.99), percentile(work, 0.5),
              percentile(work, 0.99));
  return 0;
}
