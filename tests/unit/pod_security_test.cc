// deploy/kubernetes/pod.yaml against the Kubernetes Pod Security Standards (kubernetes.io/docs/concepts/security/
// pod-security-standards), checked offline: the rules of the baseline and restricted levels, as the admission
// controller applies them to a pod spec. The session pod meets both; a pod as privileged sandboxes run (SYS_ADMIN,
// AppArmor and seccomp unconfined) meets neither, which shows the checks can fail.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace {

// The node at a dotted path ("seccompProfile.type"), or an undefined node when any part is missing (yaml-cpp throws
// when a missing node is indexed further).
YAML::Node at(const YAML::Node& n, const std::string& path) {
  YAML::Node current;
  current.reset(n);  // reset, never `=`: a yaml-cpp Node's `=` writes into the node it refers to
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!current || !current.IsMap() || !current[key]) return YAML::Node(YAML::NodeType::Undefined);
    current.reset(current[key]);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return current;
}

std::string text(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : ""; }
bool is_true(const YAML::Node& n) { return text(n) == "true"; }

std::vector<YAML::Node> containers(const YAML::Node& spec) {
  std::vector<YAML::Node> out;
  for (const char* kind : {"containers", "initContainers", "ephemeralContainers"}) {
    if (spec[kind]) {
      for (const auto& c : spec[kind]) out.push_back(c);
    }
  }
  return out;
}

// Each violated rule, by the standard's name for it.
std::vector<std::string> baseline_violations(const YAML::Node& spec) {
  std::set<std::string> out;
  const YAML::Node pod_sc = at(spec, "securityContext");
  for (const char* host : {"hostNetwork", "hostPID", "hostIPC"}) {
    if (is_true(spec[host])) out.insert("host namespaces");
  }
  static const std::set<std::string> kAllowedCaps = {"AUDIT_WRITE", "CHOWN",   "DAC_OVERRIDE", "FOWNER", "FSETID",
                                                     "KILL",        "MKNOD",   "NET_BIND_SERVICE", "SETFCAP",
                                                     "SETGID",      "SETPCAP", "SETUID",       "SYS_CHROOT"};
  auto check_context = [&](const YAML::Node& sc) {
    if (!sc) return;
    if (is_true(at(sc, "windowsOptions.hostProcess"))) out.insert("HostProcess");
    if (at(sc, "seccompProfile") && text(at(sc, "seccompProfile.type")) == "Unconfined") out.insert("seccomp");
    if (at(sc, "appArmorProfile")) {
      const std::string type = text(at(sc, "appArmorProfile.type"));
      if (type != "RuntimeDefault" && type != "Localhost") out.insert("AppArmor");
    }
    if (at(sc, "seLinuxOptions")) {
      const std::string type = text(at(sc, "seLinuxOptions.type"));
      static const std::set<std::string> kTypes = {"", "container_t", "container_init_t", "container_kvm_t",
                                                   "container_engine_t"};
      if (!kTypes.count(type) || at(sc, "seLinuxOptions.user") || at(sc, "seLinuxOptions.role")) {
        out.insert("SELinux");
      }
    }
  };
  check_context(pod_sc);
  if (pod_sc && at(pod_sc, "sysctls")) {
    static const std::set<std::string> kSafe = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                                                "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                                                "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                                                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                                                "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"};
    for (const auto& s : at(pod_sc, "sysctls")) {
      if (!kSafe.count(text(at(s, "name")))) out.insert("sysctls");
    }
  }
  const bool own_user_namespace = text(at(spec, "hostUsers")) == "false";
  for (const auto& c : containers(spec)) {
    const YAML::Node sc = at(c, "securityContext");
    check_context(sc);
    if (sc && is_true(at(sc, "privileged"))) out.insert("privileged containers");
    if (sc && at(sc, "capabilities") && at(sc, "capabilities.add")) {
      for (const auto& cap : at(sc, "capabilities.add")) {
        if (!kAllowedCaps.count(text(cap))) out.insert("capabilities");
      }
    }
    // /proc mount type: Default, or Unmasked in a pod with its own user namespace (the standard's relaxation for
    // user-namespaced pods, policy version 1.35).
    if (sc && at(sc, "procMount") && text(at(sc, "procMount")) != "Default" &&
        !(text(at(sc, "procMount")) == "Unmasked" && own_user_namespace)) {
      out.insert("/proc mount type");
    }
    if (at(c, "ports")) {
      for (const auto& p : at(c, "ports")) {
        if (at(p, "hostPort") && text(at(p, "hostPort")) != "0") out.insert("host ports");
      }
    }
  }
  if (at(spec, "volumes")) {
    for (const auto& v : at(spec, "volumes")) {
      if (at(v, "hostPath")) out.insert("HostPath volumes");
    }
  }
  return {out.begin(), out.end()};
}

std::vector<std::string> restricted_violations(const YAML::Node& spec) {
  std::set<std::string> out;
  for (const auto& v : baseline_violations(spec)) out.insert(v);
  static const std::set<std::string> kVolumes = {"configMap", "csi",  "downwardAPI", "emptyDir", "ephemeral",
                                                 "persistentVolumeClaim", "projected", "secret", "name"};
  if (at(spec, "volumes")) {
    for (const auto& v : at(spec, "volumes")) {
      for (const auto& kv : v) {
        if (!kVolumes.count(kv.first.Scalar())) out.insert("volume types");
      }
    }
  }
  const YAML::Node pod_sc = at(spec, "securityContext");
  const bool pod_non_root = pod_sc && is_true(at(pod_sc, "runAsNonRoot"));
  const std::string pod_seccomp = text(at(pod_sc, "seccompProfile.type"));
  if (pod_sc && text(at(pod_sc, "runAsUser")) == "0") out.insert("running as non-root user");
  for (const auto& c : containers(spec)) {
    const YAML::Node sc = at(c, "securityContext");
    if (!sc || text(at(sc, "allowPrivilegeEscalation")) != "false") out.insert("privilege escalation");
    if (!pod_non_root && !(sc && is_true(at(sc, "runAsNonRoot")))) out.insert("running as non-root");
    if (sc && text(at(sc, "runAsUser")) == "0") out.insert("running as non-root user");
    std::string seccomp = at(sc, "seccompProfile") ? text(at(sc, "seccompProfile.type")) : pod_seccomp;
    if (seccomp != "RuntimeDefault" && seccomp != "Localhost") out.insert("seccomp");
    bool drops_all = false;
    if (sc && at(sc, "capabilities") && at(sc, "capabilities.drop")) {
      for (const auto& cap : at(sc, "capabilities.drop")) drops_all = drops_all || text(cap) == "ALL";
    }
    if (!drops_all) out.insert("capabilities");
    if (sc && at(sc, "capabilities") && at(sc, "capabilities.add")) {
      for (const auto& cap : at(sc, "capabilities.add")) {
        if (text(cap) != "NET_BIND_SERVICE") out.insert("capabilities");
      }
    }
  }
  return {out.begin(), out.end()};
}

TEST(PodSecurity, TheSessionPodMeetsBaselineAndRestricted) {
  YAML::Node pod = YAML::LoadFile(OISHELL_DEPLOY_DIR "/pod.yaml");
  ASSERT_EQ("Pod", text(at(pod, "kind")));
  const YAML::Node spec = at(pod, "spec");
  EXPECT_EQ(std::vector<std::string>{}, baseline_violations(spec));
  EXPECT_EQ(std::vector<std::string>{}, restricted_violations(spec));
  // What oishell itself needs from the pod (issue 19): its own user namespace, the shipped seccomp profile, an
  // unmasked /proc.
  EXPECT_EQ("false", text(at(spec, "hostUsers")));
  EXPECT_EQ("Localhost", text(at(spec, "securityContext.seccompProfile.type")));
  EXPECT_EQ("oishell.json", text(at(spec, "securityContext.seccompProfile.localhostProfile")));
  EXPECT_EQ("Unmasked", text(at(at(spec, "containers")[0], "securityContext.procMount")));
}

// The agent-sandbox variant: its SandboxTemplate's podTemplate is the session pod's spec, to the letter, so it meets
// the same levels; the warm pool and the claim name it.
TEST(PodSecurity, TheAgentSandboxTemplateIsTheSessionPod) {
  YAML::Node pod = YAML::LoadFile(OISHELL_DEPLOY_DIR "/pod.yaml");
  std::vector<YAML::Node> docs = YAML::LoadAllFromFile(OISHELL_DEPLOY_DIR "/agent-sandbox.yaml");
  ASSERT_EQ(3u, docs.size());
  EXPECT_EQ("SandboxTemplate", text(at(docs[0], "kind")));
  EXPECT_EQ("extensions.agents.x-k8s.io/v1beta1", text(at(docs[0], "apiVersion")));
  const YAML::Node spec = at(docs[0], "spec.podTemplate.spec");
  EXPECT_EQ(YAML::Dump(at(pod, "spec")), YAML::Dump(spec));
  EXPECT_EQ(std::vector<std::string>{}, restricted_violations(spec));
  EXPECT_EQ("SandboxWarmPool", text(at(docs[1], "kind")));
  EXPECT_EQ(text(at(docs[0], "metadata.name")), text(at(docs[1], "spec.sandboxTemplateRef.name")));
  EXPECT_EQ("SandboxClaim", text(at(docs[2], "kind")));
  EXPECT_EQ(text(at(docs[1], "metadata.name")), text(at(docs[2], "spec.warmPoolRef.name")));
  EXPECT_EQ("Delete", text(at(docs[2], "spec.lifecycle.shutdownPolicy")));
}

TEST(PodSecurity, APrivilegedSandboxPodMeetsNeither) {
  YAML::Node spec = YAML::Load(
      "containers:\n"
      "  - name: sandbox\n"
      "    securityContext:\n"
      "      runAsUser: 0\n"
      "      capabilities: {add: [SYS_ADMIN]}\n"
      "      appArmorProfile: {type: Unconfined}\n"
      "      seccompProfile: {type: Unconfined}\n"
      "      procMount: Unmasked\n"
      "volumes:\n"
      "  - name: docker\n"
      "    hostPath: {path: /var/run/docker.sock}\n");
  EXPECT_EQ((std::vector<std::string>{"/proc mount type", "AppArmor", "HostPath volumes", "capabilities", "seccomp"}),
            baseline_violations(spec));
  auto restricted = restricted_violations(spec);
  for (const char* rule : {"privilege escalation", "running as non-root", "running as non-root user",
                           "volume types"}) {
    EXPECT_NE(restricted.end(), std::find(restricted.begin(), restricted.end(), rule)) << rule;
  }
}

}  // namespace
