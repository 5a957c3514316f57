#include "agent/kubernetes/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "base/base64.h"

namespace oishell::agent {
namespace {

constexpr const char* kServiceAccount = "/var/run/secrets/kubernetes.io/serviceaccount";

Result<std::string> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string resolve(const std::string& path, const std::string& dir) {
  if (path.empty() || path[0] == '/' || dir.empty()) return path;
  return dir + "/" + path;
}

// A named entry of one of the kubeconfig's lists (clusters, users, contexts): its inner mapping.
YAML::Node entry(const YAML::Node& list, const std::string& name, const char* inner) {
  if (!list || !list.IsSequence()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& item : list) {
    if (!item.IsMap()) continue;  // a scalar's operator[] throws (tests/fuzz/kube_config)
    if (item["name"] && item["name"].IsScalar() && item["name"].Scalar() == name && item[inner]) return item[inner];
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string scalar(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap() || !map[key] || !map[key].IsScalar()) return "";
  return map[key].Scalar();
}

// Inline base64 data, or a file.
Result<std::string> data_or_file(const YAML::Node& map, const char* data_key, const char* file_key,
                                 const std::string& dir) {
  if (std::string data = scalar(map, data_key); !data.empty()) {
    auto decoded = base64_decode(data);
    if (!decoded) return Status::error(std::string(data_key) + " is not base64");
    return *decoded;
  }
  if (std::string file = scalar(map, file_key); !file.empty()) return read_whole(resolve(file, dir));
  return std::string();
}

// The target a loaded kubeconfig names (kube_target_from_config).
Result<KubeTarget> target_from(const YAML::Node& config, const std::string& dir, const std::string& context) {
  if (!config.IsMap()) return Status::error("not a kubeconfig (a mapping with clusters, users and contexts)");
  KubeTarget t;
  t.context = context.empty() ? scalar(config, "current-context") : context;
  if (t.context.empty()) return Status::error("no current-context, and none was named (--kubernetes CONTEXT/...)");
  YAML::Node ctx = entry(config["contexts"], t.context, "context");
  if (!ctx) return Status::error("no context named `" + t.context + "`");
  if (std::string ns = scalar(ctx, "namespace"); !ns.empty()) t.namespace_name = ns;
  const std::string cluster_name = scalar(ctx, "cluster"), user_name = scalar(ctx, "user");
  YAML::Node cluster = entry(config["clusters"], cluster_name, "cluster");
  if (!cluster) return Status::error("context `" + t.context + "`: no cluster named `" + cluster_name + "`");
  t.server = scalar(cluster, "server");
  if (t.server.rfind("https://", 0) != 0 && t.server.rfind("http://", 0) != 0) {
    return Status::error("cluster `" + cluster_name + "`: server must be an http(s) URL");
  }
  while (!t.server.empty() && t.server.back() == '/') t.server.pop_back();
  t.insecure = scalar(cluster, "insecure-skip-tls-verify") == "true";
  auto ca = data_or_file(cluster, "certificate-authority-data", "certificate-authority", dir);
  if (!ca) return ca.status().with_context("cluster `" + cluster_name + "`");
  t.ca_pem = *ca;
  YAML::Node user = entry(config["users"], user_name, "user");
  if (user) {
    t.token = scalar(user, "token");
    if (t.token.empty()) {
      if (std::string file = scalar(user, "tokenFile"); !file.empty()) {
        auto token = read_whole(resolve(file, dir));
        if (!token) return token.status().with_context("user `" + user_name + "`");
        t.token = *token;
      }
    }
    while (!t.token.empty() && (t.token.back() == '\n' || t.token.back() == ' ')) t.token.pop_back();
    auto cert = data_or_file(user, "client-certificate-data", "client-certificate", dir);
    if (!cert) return cert.status().with_context("user `" + user_name + "`");
    auto key = data_or_file(user, "client-key-data", "client-key", dir);
    if (!key) return key.status().with_context("user `" + user_name + "`");
    t.client_cert_pem = *cert;
    t.client_key_pem = *key;
    if (user["exec"] || user["auth-provider"]) {
      if (t.token.empty() && t.client_cert_pem.empty()) {
        return Status::error("user `" + user_name + "`: exec and auth-provider credentials are not supported (use a "
                             "token or a client certificate)");
      }
    }
  }
  // A credential never crosses plain HTTP, where anyone on the path (or a local process on the port) reads it. A
  // server without credentials over http:// (`kubectl proxy`, which adds them itself) is still taken as given.
  if (t.server.rfind("http://", 0) == 0 && (!t.token.empty() || !t.client_cert_pem.empty())) {
    return Status::error("cluster `" + cluster_name + "`: server " + t.server + " is plain http://, and user `" +
                         user_name + "`'s " + (t.token.empty() ? "client certificate" : "token") +
                         " would be sent in clear text: use an https:// server (or, for `kubectl proxy`, a user "
                         "without credentials)");
  }
  return t;
}

}  // namespace

Result<KubeTarget> kube_target_from_config(const std::string& text, const std::string& dir,
                                           const std::string& context) {
  // yaml-cpp throws where a node is not of the shape asked for (operator[] on a scalar, a sequence where a map
  // was expected): a kubeconfig of any shape is an error, never an exception out of here (tests/fuzz/kube_config).
  try {
    return target_from(YAML::Load(text), dir, context);
  } catch (const YAML::Exception& e) {
    return Status::error(std::string("not a kubeconfig: ") + e.what());
  }
}

Result<KubeTarget> load_kube_target(const std::string& spec, const EnvLookup& env) {
  std::string parts[3];
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    size_t slash = i < 2 ? spec.find('/', start) : std::string::npos;
    parts[i] = spec.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  const std::string& context = parts[0];
  KubeTarget t;
  auto host = env("KUBERNETES_SERVICE_HOST");
  std::string config_path;
  if (auto kubeconfig = env("KUBECONFIG"); kubeconfig && !kubeconfig->empty()) {
    config_path = kubeconfig->substr(0, kubeconfig->find(':'));
  } else if (auto home = env("HOME"); home && !home->empty()) {
    config_path = *home + "/.kube/config";
  }
  auto text = config_path.empty() ? Result<std::string>(Status::error("no HOME")) : read_whole(config_path);
  if (text) {
    std::string dir = config_path.substr(0, config_path.rfind('/'));
    auto loaded = kube_target_from_config(*text, dir, context);
    if (!loaded) return loaded.status().with_context(config_path);
    t = std::move(*loaded);
  } else if (host && !host->empty() && context.empty()) {
    auto port = env("KUBERNETES_SERVICE_PORT");
    t.server = "https://" + *host + ":" + (port && !port->empty() ? *port : "443");
    auto token = read_whole(std::string(kServiceAccount) + "/token");
    if (!token) return token.status().with_context("in-cluster service account");
    t.token = *token;
    auto ca = read_whole(std::string(kServiceAccount) + "/ca.crt");
    if (ca) t.ca_pem = *ca;
    if (auto ns = read_whole(std::string(kServiceAccount) + "/namespace"); ns && !ns->empty()) t.namespace_name = *ns;
  } else {
    return Status::error("no kubeconfig at " + (config_path.empty() ? std::string("~/.kube/config") : config_path) +
                         " and not inside a pod: nothing says where the cluster is");
  }
  if (!parts[1].empty()) t.namespace_name = parts[1];
  if (!parts[2].empty()) {
    auto manifest = read_whole(parts[2]);
    if (!manifest) return manifest.status().with_context("the pod template");
    t.pod_template = *manifest;
  }
  return t;
}

}  // namespace oishell::agent
