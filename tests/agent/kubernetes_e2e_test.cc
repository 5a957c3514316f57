// End to end, `interpreter --kubernetes`: the session's sandbox as a pod, through a scripted stand-in of the
// Kubernetes API server on loopback (kube_apiserver.py: real HTTP, a real attach websocket, the pod's container
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

namespace oishell::agent::test {
namespace {

using nlohmann::json;

class KubeStandIn {
 public:
  KubeStandIn(const std::string& mode, const std::string& workdir) {
    log_ = dir_.path() + "/log.jsonl";
    std::ofstream(log_).close();
    PortReporter server = start_port_reporter({"/usr/bin/python3", KUBE_APISERVER, log_, mode, oishell_bin(), workdir});
    pid_ = server.pid;
    stdin_fd_ = server.stdin_fd;
    port_ = server.port;
    kubeconfig_ = dir_.path() + "/kubeconfig";
    std::ofstream(kubeconfig_) << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                                  "contexts: [{name: test, context: {cluster: local, user: agent, namespace: agents}}]\n"
                                  "clusters: [{name: local, cluster: {server: 'http://127.0.0.1:" +
                                      std::to_string(port_) + "'}}]\n"
                                  "users: [{name: agent, user: {token: t0k3n-for-the-cluster}}]\n";
  }
  ~KubeStandIn() {
    if (stdin_fd_ >= 0) ::close(stdin_fd_);
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);  // it ends (and ends its containers) when its stdin closes
  }
  const std::string& kubeconfig() const { return kubeconfig_; }
  std::vector<json> requests() const {
    std::vector<json> out;
    std::ifstream f(log_);
    for (std::string line; std::getline(f, line);) out.push_back(json::parse(line));
    return out;
  }
  std::string log_text() const { return read_text(log_); }

 private:
  TempDir dir_;
  std::string log_, kubeconfig_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1, port_ = 0;
};

class KubernetesE2E : public ::testing::Test {
 protected:
  // --kubernetes takes the next word as its value when it has one (CONTEXT/NAMESPACE/TEMPLATE): the prompt goes
  // first. "test/agents": the kubeconfig's context, and a namespace (the context's own, said again).
  RunResult run(ScriptedServer& model, KubeStandIn& cluster) {
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
  KubeStandIn cluster("ok", pod_workspace_.path());
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
    KubeStandIn cluster(c.mode, pod_workspace_.path());
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
  KubeStandIn cluster("evict", pod_workspace_.path());
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
