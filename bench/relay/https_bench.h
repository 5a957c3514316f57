#pragma once
// The terminated-HTTPS benchmark (issue 16), `oishell-relay-bench --https`: on loopback, one HTTPS upstream
// (https_upstream.h, 127.0.0.2) and three clients measured in the same run, interleaved in rotating order:
//   direct       TLS straight to the upstream;
//   passthrough  through the relay by CONNECT to a host whose rule does not terminate (TLS end to end);
//   terminated   through the relay by CONNECT to a host whose rule says `tls: terminate` (the client trusts the
//                relay's per-sandbox CA; the relay verifies the upstream against the rule's `upstream_ca`).
// Measured: bulk download (GET /bytes/N) and upload (POST /count) throughput, MiB/s and the ratio to direct, with
// the CPU time per GiB of this process (client, server and relay together) and of the relay's thread; the
// latency of small GETs on one keep-alive connection per path (p50/p90, added vs direct); and the handshake (a new
// connection: TCP connect, CONNECT for the relay paths, TLS handshake, one small GET answered; p50/p90). The
// issue's targets are printed with each: throughput >= 0.5 of direct, added keep-alive p50 < 0.3 ms, added
// handshake p50 < 2 ms.
#include <cstdint>

namespace oishell::bench {

struct HttpsBenchOptions {
  uint64_t size_mib = 256;  // per bulk transfer
  int rounds = 5;           // bulk transfers per path and direction
  int requests = 2000;      // keep-alive GETs per path
  int handshakes = 300;     // new connections per path
};

// Runs the benchmark and prints its report; 0 on success, 1 when a path failed.
int run_https_bench(const HttpsBenchOptions& options);

}  // namespace oishell::bench
