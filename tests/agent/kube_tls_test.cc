// oishell-kube's connection to the API server (issue 33, finding 3): a kubeconfig that names the cluster's CA makes
// it the only authority for that server. Without that, libcurl's default CA directory (/etc/ssl/certs) stays on
// beside CURLOPT_CAINFO_BLOB, and any CA in it can impersonate the API server and take the bearer token.
//
// The test's API server (kube_apiserver.py over TLS) has a certificate signed by CA "B". B is made one of the
// system's CAs: in a mount namespace of the client's own, a directory holding B (hashed, and as the bundle) is
// mounted over /etc/ssl/certs, and SSL_CERT_FILE, SSL_CERT_DIR and CURL_CA_BUNDLE name it too. A kubeconfig naming
// CA "A" must then be refused before any request is sent; one naming B connects, and so does one naming no CA (the
// system's CAs, as kubectl: the control that shows B really is trusted by default). Credentials never cross plain
// http://; a plain http:// server without credentials (`kubectl proxy`) still works.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>

#include "agent/kubernetes/kube_api.h"
#include "agent/kubernetes/kube_config.h"
#include "base/base64.h"
#include "tests/agent/kube_stand_in.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

// What a GET of a missing pod gave: "reached: <the API server's 404>" when a request arrived, else the error.
std::string probe(const std::string& kubeconfig) {
  auto target = load_kube_target("", [&](const std::string& name) -> std::optional<std::string> {
    if (name == "KUBECONFIG") return kubeconfig;
    return std::nullopt;
  });
  if (!target) return "config: " + target.status().message();
  KubeApi api(*target);
  auto got = api.call("GET", api.pods_path() + "/probe");
  if (got) return "answered 2xx";
  const std::string message = got.status().message();
  return message.starts_with("HTTP 404") ? "reached: " + message : message;
}

void write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Runs `body` in a child process whose /etc/ssl/certs is `system_ca_dir` (a user and mount namespace of its own;
// the host's stays as it is), with the OpenSSL and curl CA variables naming it too; returns what `body` returned,
// or "unavailable: ..." when the namespace cannot be made. Called while this process has a single thread (fork).
std::string with_system_cas(const std::string& system_ca_dir, const std::function<std::string()>& body) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return "unavailable: pipe2: " + std::string(std::strerror(errno));
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out[0]);
    auto fail = [&](const char* call) {
      write_all(out[1], std::string("unavailable: ") + call + ": " + std::strerror(errno));
      ::_exit(0);
    };
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) {
      std::ofstream("/proc/self/setgroups") << "deny";
      std::ofstream("/proc/self/uid_map") << uid << " " << uid << " 1";
      std::ofstream("/proc/self/gid_map") << gid << " " << gid << " 1";
    } else if (uid != 0 || ::unshare(CLONE_NEWNS) != 0) {
      fail("unshare");
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail("mount(/, MS_PRIVATE)");
    if (::mount(system_ca_dir.c_str(), "/etc/ssl/certs", nullptr, MS_BIND, nullptr) != 0) {
      fail("mount(--bind, /etc/ssl/certs)");
    }
    const std::string bundle = system_ca_dir + "/ca-certificates.crt";
    ::setenv("SSL_CERT_FILE", bundle.c_str(), 1);
    ::setenv("SSL_CERT_DIR", system_ca_dir.c_str(), 1);
    ::setenv("CURL_CA_BUNDLE", bundle.c_str(), 1);
    write_all(out[1], body());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "the child failed (status " + std::to_string(status) + ")";
  return got;
}

std::set<std::string> authorizations(const KubeStandIn& server) {
  std::set<std::string> seen;
  for (const json& r : server.requests()) seen.insert(r["headers"].value("Authorization", "(none)"));
  return seen;
}

class KubeTls : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ca_a_.ok()) << ca_a_.error();
    ASSERT_TRUE(ca_b_.ok()) << ca_b_.error();
    std::ofstream(dir_.path() + "/ca-a.pem") << ca_a_.certificate_pem();
    std::ofstream(dir_.path() + "/ca-b.pem") << ca_b_.certificate_pem();
    system_cas_ = dir_.path() + "/system-certs";
    ASSERT_EQ(0, ::mkdir(system_cas_.c_str(), 0755));
    std::ofstream(system_cas_ + "/ca-certificates.crt") << ca_b_.certificate_pem();
    std::ofstream(system_cas_ + "/" + ca_b_.subject_hash() + ".0") << ca_b_.certificate_pem();
  }
  std::string kubeconfig(const KubeStandIn& server, const std::string& name, const std::string& cluster_fields,
                         const std::string& user_fields) {
    const std::string path = dir_.path() + "/" + name;
    server.write_kubeconfig(path, cluster_fields, user_fields);
    return path;
  }

  TempDir dir_, workdir_;
  TestCa ca_a_{"oishell test CA A (the cluster's)"}, ca_b_{"oishell test CA B (a system CA)"};
  std::string system_cas_;
};

TEST_F(KubeTls, OnlyTheKubeconfigsCaVouchesForTheApiServer) {
  KubeStandIn server("ok", workdir_.path(), &ca_b_);  // its certificate chains to B
  ASSERT_TRUE(server.ok());
  const std::string a_data = kubeconfig(server, "a-data", ", certificate-authority-data: " +
                                                              base64_encode(ca_a_.certificate_pem()),
                                        "token: token-for-a-by-data");
  const std::string a_file = kubeconfig(server, "a-file", ", certificate-authority: '" + dir_.path() + "/ca-a.pem'",
                                        "token: token-for-a-by-file");
  const std::string b_file = kubeconfig(server, "b-file", ", certificate-authority: '" + dir_.path() + "/ca-b.pem'",
                                        "token: token-for-b");
  const std::string system = kubeconfig(server, "system", "", "token: token-for-the-system-cas");
  const std::string got = with_system_cas(system_cas_, [&] {
    return json({{"system", probe(system)}, {"a_data", probe(a_data)}, {"a_file", probe(a_file)},
                 {"b_file", probe(b_file)}}).dump();
  });
  if (got.starts_with("unavailable: ")) GTEST_SKIP() << "no mount namespace for the client's own CAs: " << got;
  json results = json::parse(got, nullptr, false);
  ASSERT_TRUE(results.is_object()) << got;
  const std::string not_found = "reached: HTTP 404: pods \"probe\" not found";
  // The control: with no CA in the kubeconfig the system's CAs are used, and B is one of them here.
  EXPECT_EQ(not_found, results["system"]) << got;
  // The kubeconfig names A: B's certificate is refused though the system trusts B. Before the fix the default CA
  // directory (/etc/ssl/certs) still vouched, and this reached the server with the token.
  const std::string refused =
      "GET " + server.server() + "/api/v1/namespaces/agents/pods/probe: SSL peer certificate or SSH remote key was "
      "not OK";
  EXPECT_EQ(refused, results["a_data"]) << got;
  EXPECT_EQ(refused, results["a_file"]) << got;
  // The neighbour: the kubeconfig names B, the CA that signed the server's certificate.
  EXPECT_EQ(not_found, results["b_file"]) << got;
  // A's tokens never reached the server; nothing else came.
  EXPECT_EQ((std::set<std::string>{"Bearer token-for-b", "Bearer token-for-the-system-cas"}), authorizations(server))
      << server.log_text();
}

TEST_F(KubeTls, CredentialsNeverCrossPlainHttp) {
  KubeStandIn server("ok", workdir_.path(), nullptr);  // plain http://
  ASSERT_TRUE(server.ok());
  const std::string token = kubeconfig(server, "token", "", "token: token-in-clear");
  auto refused = load_kube_target("", [&](const std::string& name) -> std::optional<std::string> {
    if (name == "KUBECONFIG") return token;
    return std::nullopt;
  });
  ASSERT_FALSE(refused);
  EXPECT_EQ(token + ": cluster `local`: server " + server.server() +
                " is plain http://, and user `agent`'s token would be sent in clear text: use an https:// server "
                "(or, for `kubectl proxy`, a user without credentials)",
            refused.status().message());
  const std::string cert = kubeconfig(server, "cert", "", "client-certificate-data: Q0VSVA==, client-key-data: S0VZ");
  EXPECT_EQ("config: " + cert + ": cluster `local`: server " + server.server() +
                " is plain http://, and user `agent`'s client certificate would be sent in clear text: use an "
                "https:// server (or, for `kubectl proxy`, a user without credentials)",
            probe(cert));
  // A target made some other way is refused by the client itself, before it connects.
  KubeTarget direct;
  direct.server = server.server();
  direct.namespace_name = "agents";
  direct.token = "token-in-clear";
  auto call = KubeApi(direct).call("GET", "/api/v1/namespaces/agents/pods/probe");
  ASSERT_FALSE(call);
  EXPECT_EQ("refusing to send the token to " + server.server() + " over plain HTTP: use an https:// server",
            call.status().message());
  auto attach = KubeApi(direct).attach("probe", "supervisor");
  ASSERT_FALSE(attach);
  EXPECT_EQ("refusing to send the token to " + server.server() + " over plain HTTP: use an https:// server",
            attach.status().message());
  // The neighbour: plain http:// without credentials (`kubectl proxy`, which adds them) is served as before.
  const std::string none = kubeconfig(server, "none", "", "{}");
  EXPECT_EQ("reached: HTTP 404: pods \"probe\" not found", probe(none));
  EXPECT_EQ((std::set<std::string>{"(none)"}), authorizations(server)) << server.log_text();
}

}  // namespace
}  // namespace oishell::agent::test
