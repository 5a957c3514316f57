#pragma once
// Where the Kubernetes API server is and how to authenticate to it, as kubectl finds it: the kubeconfig
// ($KUBECONFIG's first file, else ~/.kube/config) and its current context or a named one, or, inside a pod, the
// service account (KUBERNETES_SERVICE_HOST, /var/run/secrets/kubernetes.io/serviceaccount). Supported credentials:
// a bearer token (inline or a file) and a client certificate (inline data or files); the CA inline or as a file.
#include <string>

#include "agent/llm/provider.h"
#include "base/status.h"

namespace oishell::agent {

struct KubeTarget {
  std::string context;       // the context used ("" in a pod)
  std::string server;        // "https://10.0.0.1:6443" (http:// only without a token or client certificate)
  std::string namespace_name = "default";
  std::string token;         // bearer token, or empty
  std::string ca_pem;        // the cluster's CA (PEM), then trusted alone; or empty: the system's CAs
  bool insecure = false;     // insecure-skip-tls-verify
  std::string client_cert_pem, client_key_pem;
  std::string pod_template;  // a pod manifest (YAML or JSON) to start from; empty: the built-in session pod
};

// `spec` is --kubernetes's value, CONTEXT/NAMESPACE/TEMPLATE with every part optional ("", "prod", "prod/agents",
// "/agents", "prod/agents/pod.yaml"). Errors name the file and the missing piece.
Result<KubeTarget> load_kube_target(const std::string& spec, const EnvLookup& env);

// Parses a kubeconfig's text (the part of load_kube_target that reads no environment). `dir`: the kubeconfig's
// directory, for relative file paths.
Result<KubeTarget> kube_target_from_config(const std::string& text, const std::string& dir,
                                           const std::string& context);

}  // namespace oishell::agent
