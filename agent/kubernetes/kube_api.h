#pragma once
// The few calls of the Kubernetes API a session needs, over libcurl (loaded at run time): create a pod, read it,
// delete it, and attach to its container's stdin/stdout (a websocket in the `v4.channel.k8s.io` subprotocol, over
// the raw connection CURLOPT_CONNECT_ONLY gives). Errors carry the API server's own message ("pods is forbidden:
// ...", "exceeded quota: ...").
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "agent/kubernetes/kube_config.h"
#include "agent/server/websocket.h"
#include "base/status.h"



namespace oishell::agent {

class KubeAttach;

class KubeApi {
 public:
  explicit KubeApi(KubeTarget target) : target_(std::move(target)) {}
  const KubeTarget& target() const { return target_; }

  // A JSON request under the server's URL ("/api/v1/namespaces/x/pods"); the response's JSON on 2xx.
  Result<nlohmann::json> call(const std::string& method, const std::string& path,
                              const nlohmann::json* body = nullptr);
  // Reads the pod until it runs (its phase is Running), or fails: a container that cannot start (ErrImagePull,
  // ImagePullBackOff, CreateContainerError...), a pod that failed or was deleted, or `timeout`.
  Status wait_running(const std::string& pod, std::chrono::milliseconds timeout);
  // Attaches to the container's stdin, stdout and stderr.
  Result<std::unique_ptr<KubeAttach>> attach(const std::string& pod, const std::string& container);

  std::string pods_path() const { return "/api/v1/namespaces/" + target_.namespace_name + "/pods"; }

 private:
  KubeTarget target_;
};

// The attach stream: bytes for the container's stdin; what it writes, by channel.
class KubeAttach {
 public:
  ~KubeAttach();
  int fd() const { return fd_; }  // readable when something may have arrived
  Status send_stdin(std::string_view data);
  // What arrived so far (call when fd() is readable): appends stdout and stderr; `ended` once the stream closed,
  // with the container's exit status in `exit_code` when the server sent one.
  struct Received {
    std::string out, err;
    bool ended = false;
    std::optional<int> exit_code;
    std::string error;  // a failure the server reported on the error channel, in its words
  };
  Status receive(Received* into);

 private:
  friend class KubeApi;
  KubeAttach() = default;
  Status send_raw(std::string_view data);
  CURL* curl_ = nullptr;
  int fd_ = -1;
  server::WsFrameParser parser_{server::WsLimits{16 << 20, 64 << 20}, /*require_mask=*/false};
};

}  // namespace oishell::agent
