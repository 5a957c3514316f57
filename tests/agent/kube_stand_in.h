#pragma once
// The scripted stand-in of the Kubernetes API server (kube_apiserver.py) run for a test: HTTPS on 127.0.0.1 with a
// certificate signed by a test CA (or plain HTTP), every request it received kept in a log.
#include <sys/types.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/agent/e2e_util.h"
#include "tests/agent/test_ca.h"

namespace oishell::agent::test {

class KubeStandIn {
 public:
  // `mode`: kube_apiserver.py's (ok, forbidden, ...). `server_ca`: serves HTTPS with a certificate for 127.0.0.1
  // that this CA signs; null: plain HTTP.
  KubeStandIn(const std::string& mode, const std::string& workdir, const TestCa* server_ca);
  ~KubeStandIn();
  KubeStandIn(const KubeStandIn&) = delete;
  KubeStandIn& operator=(const KubeStandIn&) = delete;

  bool ok() const { return port_ > 0; }
  // "https://127.0.0.1:PORT" (or http://).
  const std::string& server() const { return server_; }
  // Writes a kubeconfig at `path`: context `test` (namespace agents) with cluster `local` at server(), the cluster's
  // `cluster_fields` (YAML flow entries, "" or ", certificate-authority: /x/ca.pem") and user `agent` whose
  // `user_fields` are its credentials ("token: T", or "{}").
  void write_kubeconfig(const std::string& path, const std::string& cluster_fields,
                        const std::string& user_fields) const;
  std::vector<nlohmann::json> requests() const;
  std::string log_text() const;

 private:
  TempDir dir_;
  std::string log_, server_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1, port_ = 0;
};

}  // namespace oishell::agent::test
