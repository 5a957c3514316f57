#pragma once
// Small helpers the relay benchmarks share (relay_bench.cc, https_bench.cc): blocking loopback sockets, a
// percentile, and the CPU time of this process and of the relay's thread. Benchmark code: a failure to listen
// ends the process with a message.
#include <cstdint>
#include <string>
#include <vector>

#include "base/unique_fd.h"

namespace oishell::bench {

// A listening TCP socket on ip:port (port 0: any; the port taken is written back). Exits on failure.
UniqueFd tcp_listen(const char* ip, uint16_t& port);
// A blocking connected TCP socket with TCP_NODELAY; invalid on failure.
UniqueFd tcp_connect(const char* ip, uint16_t port);
bool send_all(int fd, const std::string& data);
// The p-quantile (0..1) of `v`, nearest rank below.
double percentile(std::vector<double> v, double p);
// CPU time (user + system) of this whole process, in seconds.
double process_cpu_s();
// CPU time of the relay's thread(s) (named "oishell-relay"), in seconds.
double relay_thread_cpu_s();

}  // namespace oishell::bench
