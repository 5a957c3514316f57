#include "agent/kubernetes/kube_api.h"

#include <poll.h>

#include <random>
#include <thread>

#include "agent/core/json_util.h"
#include "agent/llm/curl_api.h"
#include "base/base64.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

size_t collect(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// The connection settings every request shares: the CA, a client certificate, or none of the checks.
//
// A kubeconfig that names the cluster's CA is the only authority for that server, as with kubectl: any other CA
// could impersonate the API server and take the token. CURLOPT_CAINFO_BLOB replaces libcurl's default bundle
// (CAINFO) but not its default CA directory (CAPATH, /etc/ssl/certs in Debian's libcurl), whose every CA would
// still vouch for the server, so both defaults are cleared. A libcurl that cannot take the blob (a TLS backend
// without it) is refused rather than left on the system's CAs.
Status set_tls(const CurlApi& c, CURL* h, const KubeTarget& t, curl_blob* ca, curl_blob* cert, curl_blob* key) {
  if (t.insecure) {
    c.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    c.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else if (!t.ca_pem.empty()) {
    *ca = {const_cast<char*>(t.ca_pem.data()), t.ca_pem.size(), CURL_BLOB_NOCOPY};
    if (CURLcode rc = c.easy_setopt(h, CURLOPT_CAINFO_BLOB, ca); rc != CURLE_OK) {
      return Status::error(std::string("this libcurl cannot trust the cluster's CA alone (CURLOPT_CAINFO_BLOB: ") +
                           c.easy_strerror(rc) + "); install libcurl4 (OpenSSL)");
    }
    for (CURLoption option : {CURLOPT_CAINFO, CURLOPT_CAPATH}) {
      if (CURLcode rc = c.easy_setopt(h, option, static_cast<char*>(nullptr)); rc != CURLE_OK) {
        return Status::error(std::string("cannot turn off libcurl's default CAs: ") + c.easy_strerror(rc));
      }
    }
  }
  if (!t.client_cert_pem.empty()) {
    *cert = {const_cast<char*>(t.client_cert_pem.data()), t.client_cert_pem.size(), CURL_BLOB_NOCOPY};
    *key = {const_cast<char*>(t.client_key_pem.data()), t.client_key_pem.size(), CURL_BLOB_NOCOPY};
    c.easy_setopt(h, CURLOPT_SSLCERT_BLOB, cert);
    c.easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    c.easy_setopt(h, CURLOPT_SSLKEY_BLOB, key);
    c.easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
  return Status::ok();
}

// Credentials go over TLS only (kube_config.cc refuses such a kubeconfig naming its entries; this holds for every
// target, the in-cluster one included).
Status check_transport(const KubeTarget& t) {
  if (t.server.rfind("https://", 0) == 0 || (t.token.empty() && t.client_cert_pem.empty())) return Status::ok();
  return Status::error("refusing to send the " + std::string(t.token.empty() ? "client certificate" : "token") +
                       " to " + t.server + " over plain HTTP: use an https:// server");
}

// The API server's words for a refusal: a Status object's message, else the body.
std::string api_message(long code, const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string message = j.is_object() ? j.value("message", "") : "";
  if (message.empty()) message = body.size() > 300 ? body.substr(0, 300) + "..." : body;
  return "HTTP " + std::to_string(code) + ": " + message;
}

// Why a pod's container cannot start, from its status ("" while it may still start).
std::string stuck_reason(const json& pod) {
  const json status = pod.value("status", json::object());
  for (const char* key : {"containerStatuses", "initContainerStatuses"}) {
    for (const auto& c : status.value(key, json::array())) {
      const json waiting = c.value("state", json::object()).value("waiting", json::object());
      const std::string reason = waiting.value("reason", "");
      if (reason == "ErrImagePull" || reason == "ImagePullBackOff" || reason == "InvalidImageName" ||
          reason == "CreateContainerError" || reason == "CreateContainerConfigError" ||
          reason == "CrashLoopBackOff" || reason == "RunContainerError") {
        return reason + ": " + waiting.value("message", "");
      }
    }
  }
  return "";
}

}  // namespace

Result<json> KubeApi::call(const std::string& method, const std::string& path, const json* body) {
  OI_TRY(check_transport(target_));
  auto api = curl_api();
  if (!api) return api.status();
  const CurlApi& c = **api;
  CURL* h = c.easy_init();
  if (!h) return Status::error("curl_easy_init failed");
  std::string url = target_.server + path, request = body ? dump_json(*body) : std::string(), response;
  curl_slist* headers = c.slist_append(nullptr, "Accept: application/json");
  headers = c.slist_append(headers, "Content-Type: application/json");
  std::string bearer = "Authorization: Bearer " + target_.token;
  if (!target_.token.empty()) headers = c.slist_append(headers, bearer.c_str());
  curl_blob ca{}, cert{}, key{};
  c.easy_setopt(h, CURLOPT_URL, url.c_str());
  c.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  c.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  if (body) {
    c.easy_setopt(h, CURLOPT_POSTFIELDS, request.c_str());
    c.easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.size()));
  }
  c.easy_setopt(h, CURLOPT_WRITEFUNCTION, &collect);
  c.easy_setopt(h, CURLOPT_WRITEDATA, &response);
  c.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  c.easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
  c.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  Status tls = set_tls(c, h, target_, &ca, &cert, &key);
  CURLcode rc = tls ? c.easy_perform(h) : CURLE_OK;
  long code = 0;
  c.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  c.slist_free_all(headers);
  c.easy_cleanup(h);
  if (!tls) return tls;
  if (rc != CURLE_OK) return Status::error(method + " " + url + ": " + c.easy_strerror(rc));
  if (code < 200 || code >= 300) return Status::error(api_message(code, response));
  json j = json::parse(response, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::error(method + " " + url + ": the answer is not JSON");
  return j;
}

Status KubeApi::wait_running(const std::string& pod, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto got = call("GET", pods_path() + "/" + pod);
    if (!got) return got.status().with_context("reading the session pod");
    const json status = got->value("status", json::object());
    const std::string phase = status.value("phase", "");
    if (phase == "Running") return Status::ok();
    if (phase == "Failed" || phase == "Succeeded") {
      return Status::error("the session pod ended before it ran (" + phase + ": " + status.value("reason", "") + " " +
                           status.value("message", "") + ")");
    }
    if (std::string stuck = stuck_reason(*got); !stuck.empty()) {
      return Status::error("the session pod cannot start: " + stuck);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::error("the session pod did not run within " +
                           std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) +
                           " s (phase " + (phase.empty() ? "unknown" : phase) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Result<std::unique_ptr<KubeAttach>> KubeApi::attach(const std::string& pod, const std::string& container) {
  OI_TRY(check_transport(target_));
  auto api = curl_api();
  if (!api) return api.status();
  const CurlApi& c = **api;
  std::unique_ptr<KubeAttach> a(new KubeAttach());
  a->curl_ = c.easy_init();
  if (!a->curl_) return Status::error("curl_easy_init failed");
  const std::string path = pods_path() + "/" + pod + "/attach?container=" + container +
                           "&stdin=true&stdout=true&stderr=true";
  const std::string url = target_.server + path;
  curl_blob ca{}, cert{}, key{};
  c.easy_setopt(a->curl_, CURLOPT_URL, url.c_str());
  c.easy_setopt(a->curl_, CURLOPT_CONNECT_ONLY, 1L);
  c.easy_setopt(a->curl_, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  c.easy_setopt(a->curl_, CURLOPT_NOSIGNAL, 1L);
  OI_TRY(set_tls(c, a->curl_, target_, &ca, &cert, &key));
  if (CURLcode rc = c.easy_perform(a->curl_); rc != CURLE_OK) {
    return Status::error("attaching: " + url + ": " + c.easy_strerror(rc));
  }
  curl_socket_t sock = CURL_SOCKET_BAD;
  c.easy_getinfo(a->curl_, CURLINFO_ACTIVESOCKET, &sock);
  a->fd_ = static_cast<int>(sock);

  std::string nonce(16, '\0');
  std::random_device random;
  for (char& ch : nonce) ch = static_cast<char>(random() & 0xff);
  const std::string ws_key = base64_encode(nonce);
  std::string host = target_.server.substr(target_.server.find("://") + 3);
  std::string upgrade = "GET " + path + " HTTP/1.1\r\nHost: " + host +
                        "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                        "Sec-WebSocket-Key: " + ws_key + "\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n";
  if (!target_.token.empty()) upgrade += "Authorization: Bearer " + target_.token + "\r\n";
  upgrade += "\r\n";
  OI_TRY(a->send_raw(upgrade));
  // The response's head; what follows it is already websocket frames.
  std::string head;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return Status::error("attaching: no answer within 15 s");
    char buf[4096];
    size_t n = 0;
    CURLcode rc = c.easy_recv(a->curl_, buf, sizeof buf, &n);
    if (rc == CURLE_AGAIN) {
      pollfd p{a->fd_, POLLIN, 0};
      ::poll(&p, 1, 200);
      continue;
    }
    if (rc != CURLE_OK) return Status::error(std::string("attaching: ") + c.easy_strerror(rc));
    if (n == 0) return Status::error("attaching: the server closed the connection");
    head.append(buf, n);
    if (head.size() > 64 * 1024) return Status::error("attaching: an answer head longer than 64 KiB");
  }
  size_t end = head.find("\r\n\r\n") + 4;
  std::string status_line = head.substr(0, head.find("\r\n"));
  if (status_line.find(" 101 ") == std::string::npos) {
    std::string rest = head.substr(end);
    return Status::error("attaching: " + status_line + (rest.empty() ? "" : ": " + rest.substr(0, 300)));
  }
  std::string lower = head.substr(0, end);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string accept = server::ws_accept_key(ws_key);
  for (char& ch : accept) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.find("sec-websocket-accept: " + accept) == std::string::npos) {
    return Status::error("attaching: the server's Sec-WebSocket-Accept does not answer our key");
  }
  a->parser_.feed(std::string_view(head).substr(end));
  return a;
}

KubeAttach::~KubeAttach() {
  if (curl_) {
    if (auto api = curl_api()) (*api)->easy_cleanup(curl_);
  }
}

Status KubeAttach::send_raw(std::string_view data) {
  const CurlApi& c = **curl_api();
  while (!data.empty()) {
    size_t n = 0;
    CURLcode rc = c.easy_send(curl_, data.data(), data.size(), &n);
    if (rc == CURLE_AGAIN) {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    if (rc != CURLE_OK) return Status::error(std::string("the attach stream: ") + c.easy_strerror(rc));
    data.remove_prefix(n);
  }
  return Status::ok();
}

Status KubeAttach::send_stdin(std::string_view data) {
  std::random_device random;
  // Channel 0 is stdin; client frames are masked (RFC 6455).
  return send_raw(server::ws_encode_frame(server::WsOpcode::binary, std::string(1, '\0') + std::string(data), true,
                                          static_cast<uint32_t>(random())));
}

Status KubeAttach::receive(Received* into) {
  const CurlApi& c = **curl_api();
  while (true) {
    char buf[65536];
    size_t n = 0;
    CURLcode rc = c.easy_recv(curl_, buf, sizeof buf, &n);
    if (rc == CURLE_AGAIN) break;
    if (rc != CURLE_OK || n == 0) {
      into->ended = true;
      break;
    }
    parser_.feed(std::string_view(buf, n));
  }
  while (auto ev = parser_.next()) {
    using Kind = server::WsEvent::Kind;
    if (ev->kind == Kind::binary || ev->kind == Kind::text) {
      if (ev->payload.empty()) continue;
      const unsigned char channel = static_cast<unsigned char>(ev->payload[0]);
      std::string_view data = std::string_view(ev->payload).substr(1);
      if (channel == 1) into->out.append(data);
      if (channel == 2) into->err.append(data);
      if (channel == 3 && !data.empty()) {  // a metav1.Status: Success, or the container's exit code
        json status = json::parse(data, nullptr, /*allow_exceptions=*/false);
        if (status.is_object()) {
          if (status.value("status", "") == "Success") {
            into->exit_code = 0;
          } else {
            for (const auto& cause : status.value("details", json::object()).value("causes", json::array())) {
              if (cause.value("reason", "") == "ExitCode") into->exit_code = std::atoi(cause.value("message", "1").c_str());
            }
            if (!into->exit_code) into->error = status.value("message", std::string(data));
          }
        }
      }
    } else if (ev->kind == Kind::ping) {
      std::random_device random;
      OI_TRY(send_raw(server::ws_encode_frame(server::WsOpcode::pong, ev->payload, true,
                                              static_cast<uint32_t>(random()))));
    } else if (ev->kind == Kind::close || ev->kind == Kind::error) {
      into->ended = true;
      if (ev->kind == Kind::error) into->error = ev->payload;
      break;
    }
  }
  return Status::ok();
}

}  // namespace oishell::agent
