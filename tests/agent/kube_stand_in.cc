#include "tests/agent/kube_stand_in.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

namespace oishell::agent::test {

KubeStandIn::KubeStandIn(const std::string& mode, const std::string& workdir, const TestCa* server_ca) {
  log_ = dir_.path() + "/log.jsonl";
  std::ofstream(log_).close();
  std::vector<std::string> argv = {"/usr/bin/python3", KUBE_APISERVER, log_, mode, oishell_bin(), workdir};
  if (server_ca) {
    TestCert cert = server_ca->server_cert("127.0.0.1");
    if (cert.certificate_pem.empty()) return;
    std::ofstream(dir_.path() + "/server.pem") << cert.certificate_pem;
    std::ofstream(dir_.path() + "/server-key.pem") << cert.key_pem;
    argv.push_back(dir_.path() + "/server.pem");
    argv.push_back(dir_.path() + "/server-key.pem");
  }
  PortReporter started = start_port_reporter(argv);
  pid_ = started.pid;
  stdin_fd_ = started.stdin_fd;
  port_ = started.port;
  server_ = std::string(server_ca ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

KubeStandIn::~KubeStandIn() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  if (pid_ > 0) ::waitpid(pid_, nullptr, 0);  // it ends (and ends its containers) when its stdin closes
}

void KubeStandIn::write_kubeconfig(const std::string& path, const std::string& cluster_fields,
                                   const std::string& user_fields) const {
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                         "contexts: [{name: test, context: {cluster: local, user: agent, namespace: agents}}]\n"
                         "clusters: [{name: local, cluster: {server: '" + server_ + "'" + cluster_fields + "}}]\n"
                         "users: [{name: agent, user: " + (user_fields == "{}" ? "{}" : "{" + user_fields + "}") +
                             "}]\n";
}

std::vector<nlohmann::json> KubeStandIn::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream f(log_);
  for (std::string line; std::getline(f, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string KubeStandIn::log_text() const { return read_text(log_); }

}  // namespace oishell::agent::test
