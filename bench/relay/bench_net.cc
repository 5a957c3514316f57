#include "bench/relay/bench_net.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace oishell::bench {

UniqueFd tcp_listen(const char* ip, uint16_t& port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  inet_pton(AF_INET, ip, &sin.sin_addr);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 || listen(fd.get(), 1024) != 0) {
    std::perror("bind/listen");
    std::exit(1);
  }
  socklen_t len = sizeof sin;
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sin), &len);
  port = ntohs(sin.sin_port);
  return fd;
}

UniqueFd tcp_connect(const char* ip, uint16_t port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  inet_pton(AF_INET, ip, &sin.sin_addr);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) return {};
  return fd;
}

bool send_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

double process_cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double relay_thread_cpu_s() {
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return 0;
  double total = 0;
  while (dirent* e = readdir(dir)) {
    std::string base = std::string("/proc/self/task/") + e->d_name;
    FILE* comm = std::fopen((base + "/comm").c_str(), "r");
    if (!comm) continue;
    char name[32] = {};
    bool relay = std::fgets(name, sizeof name, comm) && std::string(name) == "oishell-relay\n";
    std::fclose(comm);
    if (!relay) continue;
    if (FILE* stat = std::fopen((base + "/schedstat").c_str(), "r")) {
      unsigned long long ns = 0;
      if (std::fscanf(stat, "%llu", &ns) == 1) total += static_cast<double>(ns) / 1e9;
      std::fclose(stat);
    }
  }
  closedir(dir);
  return total;
}

}  // namespace oishell::bench
