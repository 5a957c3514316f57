#include "bench/relay/https_bench.h"

#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/relay/bench_net.h"
#include "bench/relay/https_upstream.h"
#include "runtime/relay/relay.h"

namespace oishell::bench {
namespace {

using Clock = std::chrono::steady_clock;
using relay::SslCtxPtr;
using relay::SslPtr;

constexpr const char* kTerminated = "bench.example";  // its rule says tls: terminate
constexpr const char* kPassthrough = "pass.example";  // its rule does not
constexpr const char* kUpstreamIp = "127.0.0.2";
constexpr size_t kBlock = 1 << 20;

enum class Via { direct, passthrough, terminated };
constexpr Via kPaths[] = {Via::direct, Via::passthrough, Via::terminated};
constexpr size_t kPathCount = 3;

const char* name(Via via) {
  switch (via) {
    case Via::direct: return "direct TLS";
    case Via::passthrough: return "relay CONNECT passthrough";
    case Via::terminated: return "relay tls: terminate";
  }
  return "?";
}

class NullSink final : public EventSink {
 public:
  void emit(const nlohmann::json&) override {}
};

// A client context as curl's: verifies the peer against `ca_file` alone, offers ALPN http/1.1.
SslCtxPtr client_context(const std::string& ca_file) {
  SslCtxPtr context(SSL_CTX_new(TLS_client_method()));
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_load_verify_locations(context.get(), ca_file.c_str(), nullptr) != 1) return {};
  static constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(context.get(), kAlpn, sizeof kAlpn);
  return context;
}

struct Conn {
  UniqueFd fd;
  SslPtr ssl;
  explicit operator bool() const { return ssl != nullptr; }
};

class Clients {
 public:
  Clients(uint16_t upstream_port, uint16_t relay_port, SslCtxPtr upstream_trust, SslCtxPtr relay_trust)
      : upstream_port_(upstream_port), relay_port_(relay_port), upstream_trust_(std::move(upstream_trust)),
        relay_trust_(std::move(relay_trust)) {}

  const char* host(Via via) const { return via == Via::passthrough ? kPassthrough : kTerminated; }

  // A new connection over `via`, its TLS handshake done (and, through the relay, its CONNECT answered).
  Conn open(Via via) const {
    Conn c;
    const std::string authority = std::string(host(via)) + ":" + std::to_string(upstream_port_);
    if (via == Via::direct) {
      c.fd = tcp_connect(kUpstreamIp, upstream_port_);
    } else {
      c.fd = tcp_connect("127.0.0.1", relay_port_);
      if (!c.fd || !send_all(c.fd.get(), "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")) {
        return {};
      }
      std::string head;
      char buf[512];
      while (head.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = recv(c.fd.get(), buf, sizeof buf, 0);
        if (n <= 0) return {};
        head.append(buf, static_cast<size_t>(n));
      }
      if (!head.starts_with("HTTP/1.1 200")) return {};
    }
    if (!c.fd) return {};
    c.ssl.reset(SSL_new(via == Via::terminated ? relay_trust_.get() : upstream_trust_.get()));
    SSL_set_fd(c.ssl.get(), c.fd.get());
    SSL_set_tlsext_host_name(c.ssl.get(), host(via));
    SSL_set1_host(c.ssl.get(), host(via));
    if (SSL_connect(c.ssl.get()) != 1) {
      ERR_print_errors_fp(stderr);
      return {};
    }
    return c;
  }

  // One request on `c`: its head, then `upload` body bytes (Content-Length); reads the response to its end.
  // Returns the response body's size, or -1 on failure.
  int64_t request(Conn& c, Via via, const std::string& method_target, uint64_t upload) const {
    static const std::string block(kBlock, 'y');
    std::string head = method_target + " HTTP/1.1\r\nHost: " + host(via) + ":" + std::to_string(upstream_port_) +
                       "\r\nUser-Agent: oishell-relay-bench\r\nAccept: */*\r\n";
    if (upload > 0) head += "Content-Length: " + std::to_string(upload) + "\r\n";
    head += "\r\n";
    if (upload > 0 && upload <= 4096) {
      head.append(block, 0, upload);
      upload = 0;
    }
    if (!write_all(c, head.data(), head.size())) return -1;
    while (upload > 0) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(upload, kBlock));
      if (!write_all(c, block.data(), n)) return -1;
      upload -= n;
    }
    static thread_local std::vector<char> buf(256 * 1024);
    std::string in;
    size_t end;
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
      int n = SSL_read(c.ssl.get(), buf.data(), static_cast<int>(buf.size()));
      if (n <= 0) return -1;
      in.append(buf.data(), static_cast<size_t>(n));
    }
    if (!in.starts_with("HTTP/1.1 200")) return -1;
    const char* length = std::strstr(in.c_str(), "Content-Length:");
    if (length == nullptr) return -1;
    const uint64_t body = std::strtoull(length + std::strlen("Content-Length:"), nullptr, 10);
    uint64_t have = in.size() - end - 4;
    while (have < body) {
      int n = SSL_read(c.ssl.get(), buf.data(), static_cast<int>(std::min<uint64_t>(buf.size(), body - have)));
      if (n <= 0) return -1;
      have += static_cast<uint64_t>(n);
    }
    return static_cast<int64_t>(body);
  }

 private:
  static bool write_all(Conn& c, const char* data, size_t size) {
    while (size > 0) {
      int n = SSL_write(c.ssl.get(), data, static_cast<int>(std::min(size, kBlock)));
      if (n <= 0) return false;
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  uint16_t upstream_port_, relay_port_;
  SslCtxPtr upstream_trust_, relay_trust_;
};

void close(Conn& c) {
  SSL_shutdown(c.ssl.get());  // close_notify, as a well-behaved client ends
  c.ssl.reset();
  c.fd.reset();
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

const char* verdict(bool met) { return met ? "met" : "NOT met"; }

}  // namespace

int run_https_bench(const HttpsBenchOptions& options) {
  auto upstream = HttpsUpstream::start(kUpstreamIp, {kTerminated, kPassthrough});
  if (!upstream) {
    std::fprintf(stderr, "%s\n", upstream.status().message().c_str());
    return 1;
  }
  const std::string& upstream_ca = (*upstream)->ca_file();

  NetworkSpec spec;
  auto terminate = HostRule::parse(kTerminated);
  auto pass = HostRule::parse(kPassthrough);
  if (!terminate || !pass) return 1;
  terminate->tls = HostRule::Tls::terminate;
  terminate->upstream_ca = upstream_ca;
  spec.allow = {*terminate, *pass};
  spec.hosts[kTerminated] = kUpstreamIp;
  spec.hosts[kPassthrough] = kUpstreamIp;
  spec.allow_private.push_back(*Cidr::parse("127.0.0.0/8"));
  NullSink sink;
  auto made = relay::Relay::create(spec, sink, nullptr);
  if (!made) {
    std::fprintf(stderr, "%s\n", made.status().message().c_str());
    return 1;
  }
  std::unique_ptr<relay::Relay> relay = std::move(made).value();
  auto authority = relay::TlsAuthority::create({kTerminated}, std::chrono::hours(24));
  if (!authority) return 1;
  const std::string relay_ca_pem = (*authority)->certificate_pem();
  if (Status s = relay->enable_termination(std::move(authority).value(), relay::SandboxCredentials{}); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  uint16_t relay_port = 0;
  std::vector<relay::Listener> listeners;
  listeners.push_back({tcp_listen("127.0.0.1", relay_port), relay::Protocol::http});
  if (Status s = relay->start(std::move(listeners)); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  const std::string relay_ca_file = upstream_ca.substr(0, upstream_ca.rfind('/')) + "/relay-ca.pem";
  if (FILE* f = std::fopen(relay_ca_file.c_str(), "w")) {
    std::fputs(relay_ca_pem.c_str(), f);
    std::fclose(f);
  }
  Clients clients((*upstream)->port(), relay_port, client_context(upstream_ca), client_context(relay_ca_file));

  // Bulk: one new connection per transfer (its handshake is noise next to the bytes), paths in rotating order.
  const uint64_t size = options.size_mib << 20;
  std::printf("https throughput: %llu MiB per transfer, %d rounds per direction, rotating order\n",
              static_cast<unsigned long long>(options.size_mib), options.rounds);
  double ratio_min = 1e9;
  for (bool up : {false, true}) {
    std::vector<double> mibps[kPathCount];
    double relay_cpu[kPathCount] = {}, cpu[kPathCount] = {};
    for (int r = 0; r < options.rounds; ++r) {
      for (size_t k = 0; k < kPathCount; ++k) {
        const size_t p = (k + static_cast<size_t>(r)) % kPathCount;
        const double relay0 = relay_thread_cpu_s(), cpu0 = process_cpu_s();
        auto t0 = Clock::now();
        Conn c = clients.open(kPaths[p]);
        const std::string target = up ? "POST /count" : "GET /bytes/" + std::to_string(size);
        int64_t got = c ? clients.request(c, kPaths[p], target, up ? size : 0) : -1;
        const double secs = ms_since(t0) / 1000;
        if (got < 0 || (!up && static_cast<uint64_t>(got) != size)) {
          std::fprintf(stderr, "%s: %s failed\n", name(kPaths[p]), up ? "upload" : "download");
          return 1;
        }
        close(c);
        relay_cpu[p] += relay_thread_cpu_s() - relay0;
        cpu[p] += process_cpu_s() - cpu0;
        mibps[p].push_back(static_cast<double>(size) / (1 << 20) / secs);
      }
    }
    const double direct = percentile(mibps[0], 0.5);
    const double gib = static_cast<double>(size) * options.rounds / (1 << 30);
    for (size_t p = 0; p < kPathCount; ++p) {
      const double med = percentile(mibps[p], 0.5);
      std::printf("  %-8s %-26s median %7.1f MiB/s (min %7.1f, max %7.1f)  ratio %.3f", up ? "upload" : "download",
                  name(kPaths[p]), med, *std::min_element(mibps[p].begin(), mibps[p].end()),
                  *std::max_element(mibps[p].begin(), mibps[p].end()), med / direct);
      std::printf("  | CPU %.2f s/GiB", cpu[p] / gib);
      if (p > 0) std::printf(", relay thread %.2f", relay_cpu[p] / gib);
      std::printf("\n");
    }
    ratio_min = std::min(ratio_min, percentile(mibps[2], 0.5) / direct);
  }

  // Keep-alive: one connection per path, small GETs in rotating order across the three.
  std::printf("https keep-alive: %d GETs of 100 bytes per path, one connection each, rotating order\n",
              options.requests);
  Conn keep[kPathCount];
  for (size_t p = 0; p < kPathCount; ++p) {
    keep[p] = clients.open(kPaths[p]);
    for (int w = 0; w < 20 && keep[p]; ++w) clients.request(keep[p], kPaths[p], "GET /bytes/100", 0);  // warm-up
  }
  std::vector<double> request_ms[kPathCount];
  for (int i = 0; i < options.requests; ++i) {
    for (size_t k = 0; k < kPathCount; ++k) {
      const size_t p = (k + static_cast<size_t>(i)) % kPathCount;
      auto t0 = Clock::now();
      if (!keep[p] || clients.request(keep[p], kPaths[p], "GET /bytes/100", 0) != 100) {
        std::fprintf(stderr, "%s: keep-alive request failed\n", name(kPaths[p]));
        return 1;
      }
      request_ms[p].push_back(ms_since(t0));
    }
  }
  for (Conn& c : keep) close(c);
  const double request_d50 = percentile(request_ms[0], 0.5);
  for (size_t p = 0; p < kPathCount; ++p) {
    std::printf("  %-26s p50 %.3f ms  p90 %.3f ms  added p50 %+.3f ms  added p90 %+.3f ms\n", name(kPaths[p]),
                percentile(request_ms[p], 0.5), percentile(request_ms[p], 0.9),
                percentile(request_ms[p], 0.5) - request_d50,
                percentile(request_ms[p], 0.9) - percentile(request_ms[0], 0.9));
  }

  // Handshake: a new connection, its TLS handshake and one small GET answered.
  std::printf("https handshake: %d new connections per path (TCP, CONNECT, TLS, one 100-byte GET), rotating order\n",
              options.handshakes);
  std::vector<double> handshake_ms[kPathCount];
  for (int i = 0; i < options.handshakes; ++i) {
    for (size_t k = 0; k < kPathCount; ++k) {
      const size_t p = (k + static_cast<size_t>(i)) % kPathCount;
      auto t0 = Clock::now();
      Conn c = clients.open(kPaths[p]);
      if (!c || clients.request(c, kPaths[p], "GET /bytes/100", 0) != 100) {
        std::fprintf(stderr, "%s: handshake failed\n", name(kPaths[p]));
        return 1;
      }
      handshake_ms[p].push_back(ms_since(t0));
      close(c);
    }
  }
  const double handshake_d50 = percentile(handshake_ms[0], 0.5);
  for (size_t p = 0; p < kPathCount; ++p) {
    std::printf("  %-26s p50 %.3f ms  p90 %.3f ms  added p50 %+.3f ms\n", name(kPaths[p]),
                percentile(handshake_ms[p], 0.5), percentile(handshake_ms[p], 0.9),
                percentile(handshake_ms[p], 0.5) - handshake_d50);
  }

  const double request_added = percentile(request_ms[2], 0.5) - request_d50;
  const double handshake_added = percentile(handshake_ms[2], 0.5) - handshake_d50;
  std::printf("targets (issue 16), terminated vs direct TLS:\n");
  std::printf("  throughput ratio (lower of download, upload) %.3f  >= 0.5    %s\n", ratio_min,
              verdict(ratio_min >= 0.5));
  std::printf("  added keep-alive p50                        %.3f ms < 0.3 ms  %s\n", request_added,
              verdict(request_added < 0.3));
  std::printf("  added handshake p50                         %.3f ms < 2 ms    %s\n", handshake_added,
              verdict(handshake_added < 2.0));
  relay->stop();
  std::remove(relay_ca_file.c_str());
  return 0;
}

}  // namespace oishell::bench
