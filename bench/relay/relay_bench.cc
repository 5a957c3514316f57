// oishell-relay-bench: throughput and added latency of the relay on loopback, against a direct connection, two
// "ideal" forwarders (ideal_forwarder.h: blocking calls, one thread per direction, no policy; by splice and by
// copy: the upper bound of any userspace relay here) and a plain `socat` TCP forwarder. Everything runs on
// 127.0.0.x: an HTTP server thread (127.0.0.2), the relay in this process (as in the supervisor), the ideal
// forwarders as threads, socat as a child process when installed.
//
//   oishell-relay-bench [--size-mib N] [--rounds R] [--requests K] [--socat no] [--paths direct,connect,...]
//   oishell-relay-bench --https [--size-mib 256] [--rounds 5] [--requests 2000] [--handshakes 300]
//
// --https runs the terminated-HTTPS benchmark instead (https_bench.h): direct TLS, CONNECT passthrough and
// `tls: terminate` through the relay, against an HTTPS upstream on 127.0.0.2.
//
// Throughput: R rounds, each downloading N MiB over every path (direct; ideal = both ideal forwarders, or
// ideal-splice / ideal-copy; connect = relay CONNECT; forward = relay absolute-form GET; socat), alternating in
// rotating order. Per path: the median MB/s, the ratio to direct, the CPU time of this process per GiB moved
// (server + client + relay or ideal forwarder) with the relay thread's share, and loopback packets per MiB.
// Latency: K sequential small requests (GET of 100 bytes), each on a new connection: direct, through the relay
// (absolute-form: the same round trips as direct; CONNECT: one more), the ideal copy forwarder and socat;
// p50/p99 and the added p50/p99.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/relay/bench_net.h"
#include "bench/relay/https_bench.h"
#include "bench/relay/ideal_forwarder.h"
#include "runtime/relay/relay.h"

namespace {

using namespace oishell;
using namespace oishell::bench;
using Clock = std::chrono::steady_clock;

// HTTP server: GET /bytes/N answers N bytes from a static buffer; one thread per connection; Connection: close.
void serve_http(int listener) {
  static std::vector<char> block(1 << 20, 'x');
  while (true) {
    int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    std::thread([c] {
      UniqueFd fd(c);
      int one = 1;
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::string in;
      char buf[4096];
      while (in.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = recv(c, buf, sizeof buf, 0);
        if (n <= 0) return;
        in.append(buf, static_cast<size_t>(n));
      }
      size_t p = in.find("/bytes/");
      uint64_t size = p == std::string::npos ? 0 : std::strtoull(in.c_str() + p + 7, nullptr, 10);
      if (!send_all(c, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size) + "\r\nConnection: close\r\n\r\n"))
        return;
      for (uint64_t off = 0; off < size;) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(block.size(), size - off));
        ssize_t w = send(c, block.data(), n, MSG_NOSIGNAL);
        if (w <= 0) return;
        off += static_cast<uint64_t>(w);
      }
      shutdown(c, SHUT_WR);
      while (recv(c, buf, sizeof buf, 0) > 0) {
      }
    }).detach();
  }
}

enum class Path { direct, ideal_splice, ideal_copy, relay_connect, relay_forward, socat };
const char* name(Path p) {
  switch (p) {
    case Path::direct:
      return "direct";
    case Path::ideal_splice:
      return "ideal fwd (splice)";
    case Path::ideal_copy:
      return "ideal fwd (copy)";
    case Path::relay_connect:
      return "relay (CONNECT)";
    case Path::relay_forward:
      return "relay (absolute-form)";
    case Path::socat:
      return "socat";
  }
  return "?";
}

struct Ports {
  uint16_t server = 0, relay = 0, socat = 0, ideal_splice = 0, ideal_copy = 0;
};

// One GET /bytes/size over the path; returns the bytes of body received (or -1 on error).
int64_t fetch(Path path, const Ports& ports, uint64_t size) {
  std::string host = "bench.example:" + std::to_string(ports.server);
  std::string target = "/bytes/" + std::to_string(size);
  UniqueFd fd;
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  switch (path) {
    case Path::direct:
      fd = tcp_connect("127.0.0.2", ports.server);
      break;
    case Path::socat:
      fd = tcp_connect("127.0.0.1", ports.socat);
      break;
    case Path::ideal_splice:
      fd = tcp_connect("127.0.0.1", ports.ideal_splice);
      break;
    case Path::ideal_copy:
      fd = tcp_connect("127.0.0.1", ports.ideal_copy);
      break;
    case Path::relay_forward:
      fd = tcp_connect("127.0.0.1", ports.relay);
      request = "GET http://" + host + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
      break;
    case Path::relay_connect: {
      fd = tcp_connect("127.0.0.1", ports.relay);
      if (!fd || !send_all(fd.get(), "CONNECT " + host + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")) return -1;
      // The relay's reply head, read as a real client does (one recv, not a byte at a time); nothing follows it
      // before the request below is sent.
      std::string head;
      char buf[512];
      while (head.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
        if (n <= 0) return -1;
        head.append(buf, static_cast<size_t>(n));
      }
      if (head.rfind("HTTP/1.1 200", 0) != 0 || head.size() != head.find("\r\n\r\n") + 4) return -1;
      break;
    }
  }
  if (!fd || !send_all(fd.get(), request)) return -1;
  static std::vector<char> buf(1 << 20);
  int64_t total = 0;
  while (true) {
    ssize_t n = recv(fd.get(), buf.data(), buf.size(), 0);
    if (n < 0) return -1;
    if (n == 0) break;
    total += n;
  }
  return total;
}

// Packets through the loopback device so far (its transmit count: every TCP segment on 127.0.0.x passes once).
double loopback_packets() {
  FILE* f = std::fopen("/proc/net/dev", "r");
  if (!f) return 0;
  char line[512];
  double packets = 0;
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long rx_bytes = 0, rx_packets = 0;
    if (std::sscanf(line, " lo: %llu %llu", &rx_bytes, &rx_packets) == 2) packets = static_cast<double>(rx_packets);
  }
  std::fclose(f);
  return packets;
}

bool path_wanted(const std::string& list, const char* key) {
  return list.empty() || ("," + list + ",").find(std::string(",") + key + ",") != std::string::npos;
}

class CountingSink final : public EventSink {
 public:
  void emit(const nlohmann::json&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t size_mib = 1024;
  int rounds = 5;
  int requests = 1000;
  bool use_socat = true;
  std::string only;
  if (std::find_if(argv + 1, argv + argc, [](const char* a) { return std::string(a) == "--https"; }) != argv + argc) {
    bench::HttpsBenchOptions https;
    for (int i = 1; i + 1 < argc; ++i) {
      std::string a = argv[i];
      if (a == "--size-mib") https.size_mib = std::strtoull(argv[i + 1], nullptr, 10);
      if (a == "--rounds") https.rounds = std::atoi(argv[i + 1]);
      if (a == "--requests") https.requests = std::atoi(argv[i + 1]);
      if (a == "--handshakes") https.handshakes = std::atoi(argv[i + 1]);
    }
    signal(SIGPIPE, SIG_IGN);
    return bench::run_https_bench(https);
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--size-mib") size_mib = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (a == "--requests") requests = std::atoi(argv[i + 1]);
    if (a == "--socat") use_socat = std::string(argv[i + 1]) != "no";
    if (a == "--paths") only = argv[i + 1];
  }
  signal(SIGPIPE, SIG_IGN);
  Ports ports;
  UniqueFd server = tcp_listen("127.0.0.2", ports.server);
  std::thread(serve_http, server.get()).detach();

  NetworkSpec spec;
  spec.allow.push_back(*HostRule::parse("bench.example"));
  spec.hosts["bench.example"] = "127.0.0.2";
  spec.allow_private.push_back(*Cidr::parse("127.0.0.0/8"));
  CountingSink sink;
  auto relay = relay::Relay::create(spec, sink, nullptr);
  if (!relay) {
    std::fprintf(stderr, "%s\n", relay.status().message().c_str());
    return 1;
  }
  std::vector<relay::Listener> listeners;
  listeners.push_back({tcp_listen("127.0.0.1", ports.relay), relay::Protocol::http});
  if (Status s = (*relay)->start(std::move(listeners)); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }

  UniqueFd ideal_splice = tcp_listen("127.0.0.1", ports.ideal_splice);
  bench::start_ideal_forwarder(ideal_splice.get(), "127.0.0.2", ports.server, bench::ForwardBy::splice);
  UniqueFd ideal_copy = tcp_listen("127.0.0.1", ports.ideal_copy);
  bench::start_ideal_forwarder(ideal_copy.get(), "127.0.0.2", ports.server, bench::ForwardBy::copy);

  // socat as a plain forwarder, if installed.
  pid_t socat = -1;
  {
    UniqueFd probe = tcp_listen("127.0.0.1", ports.socat);  // pick a free port, then hand it to socat
  }
  std::string listen_arg = "TCP-LISTEN:" + std::to_string(ports.socat) + ",bind=127.0.0.1,fork,reuseaddr";
  std::string connect_arg = "TCP:127.0.0.2:" + std::to_string(ports.server);
  use_socat = use_socat && path_wanted(only, "socat");
  socat = use_socat ? fork() : -1;
  if (socat == 0) {
    execlp("socat", "socat", listen_arg.c_str(), connect_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool have_socat = false;
  for (int i = 0; i < 100 && !have_socat && socat > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    have_socat = tcp_connect("127.0.0.1", ports.socat).valid();
  }

  std::vector<Path> paths = {Path::direct};
  if (path_wanted(only, "ideal") || path_wanted(only, "ideal-splice")) paths.push_back(Path::ideal_splice);
  if (path_wanted(only, "ideal") || path_wanted(only, "ideal-copy")) paths.push_back(Path::ideal_copy);
  if (path_wanted(only, "connect")) paths.push_back(Path::relay_connect);
  if (path_wanted(only, "forward")) paths.push_back(Path::relay_forward);
  if (have_socat) paths.push_back(Path::socat);
  uint64_t size = size_mib << 20;
  std::printf("throughput: %llu MiB per download, %d rounds, alternating (rotating order)\n",
              static_cast<unsigned long long>(size_mib), rounds);
  std::vector<std::vector<double>> mbps(paths.size());
  std::vector<double> cpu(paths.size()), relay_cpu(paths.size()), wall(paths.size()), packets(paths.size());
  // Each round starts at the next path (rotation), so that no path always follows the same one: what a path
  // leaves behind (socat's exiting child, a server thread ending) would otherwise always land on its successor.
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < paths.size(); ++k) {
      size_t p = (k + static_cast<size_t>(r)) % paths.size();
      double cpu0 = process_cpu_s(), relay0 = relay_thread_cpu_s(), packets0 = loopback_packets();
      auto t0 = Clock::now();
      int64_t got = fetch(paths[p], ports, size);
      double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      cpu[p] += process_cpu_s() - cpu0;
      relay_cpu[p] += relay_thread_cpu_s() - relay0;
      wall[p] += secs;
      packets[p] += loopback_packets() - packets0;
      if (got < static_cast<int64_t>(size)) {
        std::fprintf(stderr, "%s: short download (%lld)\n", name(paths[p]), static_cast<long long>(got));
        return 1;
      }
      mbps[p].push_back(static_cast<double>(size) / 1e6 / secs);
    }
  }
  double direct = rounds > 0 ? percentile(mbps[0], 0.5) : 0;
  double gib = static_cast<double>(size) * rounds / (1 << 30);
  for (size_t p = 0; p < paths.size() && rounds > 0; ++p) {
    double med = percentile(mbps[p], 0.5);
    std::printf("  %-22s median %6.0f MB/s (min %5.0f, max %5.0f) ratio %.3f", name(paths[p]), med,
                *std::min_element(mbps[p].begin(), mbps[p].end()), *std::max_element(mbps[p].begin(), mbps[p].end()),
                med / direct);
    if (paths[p] == Path::socat) {
      std::printf(" | CPU n/a (socat is another process)");
    } else {
      std::printf(" | CPU %.2f s/GiB (%.2f busy CPUs)", cpu[p] / gib, cpu[p] / wall[p]);
    }
    if (relay_cpu[p] > 0.01 * cpu[p]) std::printf(", relay thread %.2f s/GiB", relay_cpu[p] / gib);
    std::printf(" | %.0f lo packets/MiB\n", packets[p] / (gib * 1024));
  }

  std::printf("latency: %d sequential GETs of 100 bytes, each on a new connection, interleaved (rotating order)\n",
              requests);
  std::vector<Path> lat_paths = {Path::direct};
  if (path_wanted(only, "forward")) lat_paths.push_back(Path::relay_forward);
  if (path_wanted(only, "connect")) lat_paths.push_back(Path::relay_connect);
  if (path_wanted(only, "ideal") || path_wanted(only, "ideal-copy")) lat_paths.push_back(Path::ideal_copy);
  if (have_socat) lat_paths.push_back(Path::socat);
  std::vector<std::vector<double>> ms(lat_paths.size());
  for (int i = 0; i < requests; ++i) {
    for (size_t k = 0; k < lat_paths.size(); ++k) {
      size_t p = (k + static_cast<size_t>(i)) % lat_paths.size();
      auto t0 = Clock::now();
      if (fetch(lat_paths[p], ports, 100) <= 0) {
        std::fprintf(stderr, "%s: request failed\n", name(lat_paths[p]));
        return 1;
      }
      ms[p].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  }
  double d50 = requests > 0 ? percentile(ms[0], 0.5) : 0, d99 = requests > 0 ? percentile(ms[0], 0.99) : 0;
  for (size_t p = 0; p < lat_paths.size() && requests > 0; ++p) {
    double p50 = percentile(ms[p], 0.5), p99 = percentile(ms[p], 0.99);
    std::printf("  %-22s p50 %.3f ms  p99 %.3f ms  added p50 %+.3f ms  added p99 %+.3f ms\n", name(lat_paths[p]),
                p50, p99, p50 - d50, p99 - d99);
  }
  (*relay)->stop();
  if (socat > 0) {
    kill(socat, SIGTERM);
    waitpid(socat, nullptr, 0);
  }
  return 0;
}
