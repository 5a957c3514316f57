// `--kubernetes`'s pieces: the kubeconfig read as kubectl reads it (agent/kubernetes/kube_config.h), and the session
// pod made from its template (agent/kubernetes/kube_pod.h).
#include <gtest/gtest.h>

#include <fstream>

#include "agent/kubernetes/kube_config.h"
#include "agent/kubernetes/kube_pod.h"
#include "base/base64.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

const char* kConfig =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: dev\n"
    "contexts:\n"
    "  - {name: dev, context: {cluster: c1, user: u1}}\n"
    "  - {name: prod, context: {cluster: c2, user: u2, namespace: agents}}\n"
    "clusters:\n"
    "  - {name: c1, cluster: {server: 'https://10.0.0.1:6443/', certificate-authority-data: Q0EtUEVN}}\n"
    "  - {name: c2, cluster: {server: 'https://prod.example:443', insecure-skip-tls-verify: true}}\n"
    "users:\n"
    "  - {name: u1, user: {token: dev-token}}\n"
    "  - {name: u2, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}\n";

TEST(KubeConfig, TheCurrentContextOrANamedOne) {
  auto dev = kube_target_from_config(kConfig, "/tmp", "");
  ASSERT_TRUE(dev) << dev.status().message();
  EXPECT_EQ("dev", dev->context);
  EXPECT_EQ("https://10.0.0.1:6443", dev->server);
  EXPECT_EQ("default", dev->namespace_name);
  EXPECT_EQ("dev-token", dev->token);
  EXPECT_EQ("CA-PEM", dev->ca_pem);
  auto prod = kube_target_from_config(kConfig, "/tmp", "prod");
  ASSERT_TRUE(prod) << prod.status().message();
  EXPECT_EQ("agents", prod->namespace_name);
  EXPECT_TRUE(prod->insecure);
  EXPECT_EQ("CERT", prod->client_cert_pem);
  EXPECT_EQ("KEY", prod->client_key_pem);
  auto missing = kube_target_from_config(kConfig, "/tmp", "staging");
  ASSERT_FALSE(missing);
  EXPECT_EQ("no context named `staging`", missing.status().message());
  EXPECT_FALSE(kube_target_from_config("clusters: [", "/tmp", ""));
  auto exec_only = kube_target_from_config(
      "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
      "clusters: [{name: c, cluster: {server: 'https://k'}}]\nusers: [{name: u, user: {exec: {command: aws}}}]\n",
      "/tmp", "");
  ASSERT_FALSE(exec_only);
  EXPECT_NE(std::string::npos, exec_only.status().message().find("exec and auth-provider credentials are not "
                                                                   "supported"));
}

// A kubeconfig of another shape is an error, never an exception: a list entry that is a scalar threw yaml-cpp's
// BadSubscript out of the reader (interpreter --kubernetes ended on it; tests/fuzz/kube_config found it).
TEST(KubeConfig, AnyShapeIsAnErrorNotAnException) {
  const std::string entries = "current-context: dev\ncontexts: [{name: dev, context: {cluster: c, user: u}}]\n";
  auto scalar_entry = kube_target_from_config(entries + "clusters: [just-a-string]\n", "", "");
  ASSERT_FALSE(scalar_entry);
  EXPECT_NE(std::string::npos, scalar_entry.status().message().find("no cluster named `c`"));
  EXPECT_FALSE(kube_target_from_config("current-context: dev\ncontexts: [[1], x]\n", "", ""));
  EXPECT_FALSE(kube_target_from_config("current-context: dev\ncontexts: {name: dev}\n", "", ""));
  // The neighbour: the same config with the entry a mapping reads.
  auto fine = kube_target_from_config(entries + "clusters: [just-a-string, {name: c, cluster: {server: https://k}}]\n",
                                      "", "");
  ASSERT_TRUE(fine) << fine.status().message();
  EXPECT_EQ("https://k", fine->server);
}

TEST(KubeConfig, TheSpecNamesContextNamespaceAndTemplate) {
  test::TempDir home;
  std::ofstream(home.path() + "/config") << kConfig;
  std::ofstream(home.path() + "/pod.yaml") << "kind: Pod\n";
  auto env = [&](const std::string& name) -> std::optional<std::string> {
    if (name == "KUBECONFIG") return home.path() + "/config:/elsewhere";
    return std::nullopt;
  };
  auto t = load_kube_target("prod/team-a/" + home.path() + "/pod.yaml", env);
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ("prod", t->context);
  EXPECT_EQ("team-a", t->namespace_name);
  EXPECT_EQ("kind: Pod\n", t->pod_template);
  auto current = load_kube_target("", env);
  ASSERT_TRUE(current);
  EXPECT_EQ("dev", current->context);
  auto nowhere = load_kube_target("", [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  ASSERT_FALSE(nowhere);
  EXPECT_NE(std::string::npos, nowhere.status().message().find("not inside a pod"));
}

TEST(KubePod, TheTemplateGetsTheSessionsNameCommandAndDeadline) {
  const std::string pod_yaml = std::string(OISHELL_SOURCE_DIR) + "/deploy/kubernetes/pod.yaml";
  std::string text = test::read_text(pod_yaml);
  auto pod = session_pod(text, "oishell-session-0123456789", {"--workspace", "/workspace", "--profile", "strict"});
  ASSERT_TRUE(pod) << pod.status().message();
  EXPECT_EQ("oishell-session-0123456789", (*pod)["metadata"]["name"]);
  EXPECT_EQ("oishell-session-0123456789", (*pod)["metadata"]["labels"]["oishell.dev/session"]);
  EXPECT_EQ(json({"oishell", "supervise", "--workspace", "/workspace", "--profile", "strict"}),
            (*pod)["spec"]["containers"][0]["command"]);
  EXPECT_EQ(true, (*pod)["spec"]["containers"][0]["stdin"]);
  EXPECT_EQ(86400, (*pod)["spec"]["activeDeadlineSeconds"]);
  EXPECT_EQ(false, (*pod)["spec"]["hostUsers"]);  // the template's own settings kept, typed as JSON wants them
  EXPECT_EQ(1000, (*pod)["spec"]["securityContext"]["runAsUser"]);
  EXPECT_EQ("supervisor", supervisor_container(*pod));
  EXPECT_FALSE(session_pod("kind: Deployment\nspec: {}\n", "x", {}));
  EXPECT_FALSE(session_pod("kind: Pod\nspec: {containers: []}\n", "x", {}));
  EXPECT_TRUE(session_pod_name().starts_with("oishell-session-"));
  EXPECT_EQ(26u, session_pod_name().size());
}

}  // namespace
}  // namespace oishell::agent
