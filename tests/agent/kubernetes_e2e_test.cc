// End to end, `interpreter --kubernetes`: the session's sandbox as a pod, through a scripted stand-in of the
// Kubernetes API server on loopback (kube_apiserver.py: real HTTPS, a real attach websocket, the pod's container
// played by the pod's own `oishell supervise` command run here). A block runs in the pod and its output reaches the
// model; the pod is the session pod (no privilege) and is deleted at the end; the model's key never appears in
// anything sent to the cluster; and the API server's refusals (forbidden, quota, an image that cannot be pulled, an
// eviction mid-session) reach the user and the model in the API server's words.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/agent/e2e_util.h"
#include "tests/agent/kube_stand_in.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

// The stand-in over HTTPS, as a cluster is: its certificate signed by a test CA that the kubeconfig names (and
// nothing else on this machine trusts), the token sent as a real client sends it.
class TlsCluster {
 public:
  TlsCluster(const std::string& mode, const std::string& workdir) : server_(mode, workdir, &ca_) {
    std::ofstream(dir_.path() + "/ca.pem") << ca_.certificate_pem();
    kubeconfig_ = dir_.path() + "/kubeconfig";
    server_.write_kubeconfig(kubeconfig_, ", certificate-authority: '" + dir_.path() + "/ca.pem'",
                             "token: t0k3n-for-the-cluster");
  }
  const std::string& kubeconfig() const { return kubeconfig_; }
  std::vector<json> requests() const { return server_.requests(); }
  std::string log_text() const { return server_.log_text(); }

 private:
  TempDir dir_;
  TestCa ca_{"oishell kubernetes e2e test CA"};
  KubeStandIn server_;
  std::string kubeconfig_;
};

class KubernetesE2E : public ::testing::Test {
 protected:
  // --kubernetes takes the next word as its value when it has one (CONTEXT/NAMESPACE/TEMPLATE): the prompt goes
  // first. "test/agents": the kubeconfig's context, and a namespace (the context's own, said again).
  RunResult run(ScriptedServer& model, TlsCluster& cluster) {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", model.base(), "--plain", "Run it in the cluster.",
              "--kubernetes", "test/agents"};
    o.env = {{"OPENAI_API_KEY", "sk-never-in-the-cluster"}, {"KUBECONFIG", cluster.kubeconfig()}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.timeout_ms = 90000;
    RunResult r = run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << r.out << r.err;
    return r;
  }
  TempDir workspace_, home_, pod_workspace_;
};

TEST_F(KubernetesE2E, ABlockRunsInTheSessionPodWhichIsDeletedAfterwards) {
  TlsCluster cluster("ok", pod_workspace_.path());
  ScriptedServer model(json::array({
      tool("python", "import os\nprint('in the pod at', os.getcwd())\nopen('made-in-the-pod', 'w').write('yes')\n"),
      say("Done in the cluster."),
  }));
  RunResult r = run(model, cluster);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto asked = model.requests();
  ASSERT_EQ(2u, asked.size()) << r.out << r.err;
  EXPECT_NE(std::string::npos, last_tool_output(asked[1]["body"]).find("in the pod at " + pod_workspace_.path()))
      << last_tool_output(asked[1]["body"]);
  EXPECT_EQ("yes", read_text(pod_workspace_.path() + "/made-in-the-pod"));
  EXPECT_FALSE(std::filesystem::exists(workspace_.path() + "/made-in-the-pod"));  // not on this machine

  auto calls = cluster.requests();
  ASSERT_GE(calls.size(), 4u) << cluster.log_text();
  EXPECT_EQ("POST", calls.front()["method"]);
  EXPECT_EQ("/api/v1/namespaces/agents/pods", calls.front()["path"]);
  json pod = json::parse(calls.front()["body"].get<std::string>());
  const std::string name = pod["metadata"]["name"];
  EXPECT_TRUE(name.starts_with("oishell-session-")) << name;
  EXPECT_EQ(false, pod["spec"]["hostUsers"]);
  EXPECT_EQ("Localhost", pod["spec"]["securityContext"]["seccompProfile"]["type"]);
  EXPECT_EQ(86400, pod["spec"]["activeDeadlineSeconds"]);
  EXPECT_EQ(json({"oishell", "supervise", "--workspace", "/workspace"}),
            json(std::vector<json>(pod["spec"]["containers"][0]["command"].begin(),
                                   pod["spec"]["containers"][0]["command"].begin() + 4)));
  bool attached = false;
  for (const auto& c : calls) {
    EXPECT_EQ("Bearer t0k3n-for-the-cluster", c["headers"].value("Authorization", "")) << c["path"];
    attached = attached || c["path"].get<std::string>().find("/" + name + "/attach?") != std::string::npos;
  }
  EXPECT_TRUE(attached) << cluster.log_text();
  EXPECT_EQ("DELETE", calls.back()["method"]);
  EXPECT_EQ("/api/v1/namespaces/agents/pods/" + name, calls.back()["path"]);
  EXPECT_EQ(std::string::npos, cluster.log_text().find("sk-never-in-the-cluster"));  // the key stays here
  // The model is told where its code runs.
  EXPECT_NE(std::string::npos, conversation_text(asked[0]["body"]).find("openshell sandbox in a Kubernetes pod"))
      << conversation_text(asked[0]["body"]);
}

// A session whose pod cannot be created or started does not start: the user is told why in the API server's words
// (as when a local sandbox cannot be built), and the model is never asked.
TEST_F(KubernetesE2E, TheApiServersRefusalsReachTheUser) {
  struct Case {
    const char* mode;
    const char* words;
  };
  for (const Case& c : {Case{"forbidden", "pods is forbidden: User \\\"agent\\\" cannot create resource"},
                        Case{"quota", "exceeded quota: compute"},
                        Case{"imagepull", "ErrImagePull: failed to pull image"}}) {
    TlsCluster cluster(c.mode, pod_workspace_.path());
    ScriptedServer model(json::array({tool("python", "print('never')"), say("I could not run it.")}));
    RunResult r = run(model, cluster);
    EXPECT_NE(0, r.exit_code) << c.mode;
    EXPECT_TRUE(model.requests().empty()) << c.mode;
    std::string words = c.words;
    for (size_t at; (at = words.find("\\\"")) != std::string::npos;) words.replace(at, 2, "\"");
    EXPECT_NE(std::string::npos, (r.out + r.err).find(words)) << c.mode << ": " << r.out << r.err;
    if (std::string(c.mode) == "imagepull") {
      EXPECT_EQ("DELETE", cluster.requests().back()["method"]);  // the pod that could not start is removed
    }
  }
}

TEST_F(KubernetesE2E, AnEvictionMidSessionIsReported) {
  TlsCluster cluster("evict", pod_workspace_.path());
  ScriptedServer model(json::array({
      tool("python", "print('started', flush=True)\nimport time\ntime.sleep(30)\nprint('never')\n"),
      say("The pod went away."),
  }));
  RunResult r = run(model, cluster);
  auto asked = model.requests();
  ASSERT_EQ(2u, asked.size()) << r.out << r.err;
  const std::string told = last_tool_output(asked[1]["body"]);
  EXPECT_NE(std::string::npos, told.find("started")) << told;
  EXPECT_EQ(std::string::npos, told.find("never")) << told;
  EXPECT_NE(std::string::npos, (r.out + r.err + told).find("evicted or deleted")) << r.out << r.err << told;
}

}  // namespace
}  // namespace oishell::agent::test
