#include "agent/llm/http.h"

#include "agent/llm/curl_api.h"

#include <cstdlib>
#include <memory>
#include <mutex>

namespace oishell::agent {
namespace {

constexpr size_t kMaxErrorBody = 64 * 1024;

struct Transfer {
  const CurlApi* api = nullptr;
  CURL* easy = nullptr;
  const std::function<void(std::string_view)>* on_body = nullptr;
  ClientResponse* response = nullptr;
};

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * nmemb;
  long status = 0;
  t->api->easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 200 && status < 300) {
    t->response->body_bytes += n;
    (*t->on_body)(std::string_view(data, n));
  } else if (t->response->error_body.size() < kMaxErrorBody) {
    t->response->error_body.append(data, std::min(n, kMaxErrorBody - t->response->error_body.size()));
  }
  return n;
}

size_t on_header(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * nmemb);
  constexpr std::string_view kRetry = "retry-after:";
  if (line.size() > kRetry.size()) {
    bool match = true;
    for (size_t i = 0; i < kRetry.size(); ++i) {
      char c = line[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != kRetry[i]) match = false;
    }
    if (match) {
      std::string value(line.substr(kRetry.size()));
      char* end = nullptr;
      long seconds = std::strtol(value.c_str(), &end, 10);
      if (end != value.c_str() && seconds >= 0) t->response->retry_after_s = seconds;
    }
  }
  return size * nmemb;
}

const CurlApi* g_api = nullptr;  // set before any handle exists

struct CurlSlistDeleter {
  void operator()(curl_slist* list) const { g_api->slist_free_all(list); }
};
struct CurlEasyDeleter {
  void operator()(CURL* easy) const { g_api->easy_cleanup(easy); }
};
struct CurlMultiDeleter {
  void operator()(CURLM* multi) const { g_api->multi_cleanup(multi); }
};

}  // namespace

ClientResponse http_perform(const ClientRequest& request, const std::function<void(std::string_view)>& on_body) {
  ClientResponse response;
  auto loaded = curl_api();
  if (!loaded) {
    response.transport_error = loaded.status().message();
    return response;
  }
  const CurlApi& api = **loaded;
  g_api = &api;
  std::unique_ptr<CURL, CurlEasyDeleter> easy(api.easy_init());
  std::unique_ptr<CURLM, CurlMultiDeleter> multi(api.multi_init());
  if (!easy || !multi) {
    response.transport_error = "curl_easy_init: out of memory";
    return response;
  }
  Transfer transfer{&api, easy.get(), &on_body, &response};
  std::unique_ptr<curl_slist, CurlSlistDeleter> headers;
  for (const auto& h : request.headers) {
    curl_slist* next = api.slist_append(headers.get(), h.c_str());
    if (next) {
      (void)headers.release();
      headers.reset(next);
    }
  }
  CURL* e = easy.get();
  api.easy_setopt(e, CURLOPT_URL, request.url.c_str());
  api.easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
  if (!request.body.empty()) {
    api.easy_setopt(e, CURLOPT_POSTFIELDS, request.body.data());
    api.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  api.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  api.easy_setopt(e, CURLOPT_WRITEDATA, &transfer);
  api.easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  api.easy_setopt(e, CURLOPT_HEADERDATA, &transfer);
  api.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, request.connect_timeout_ms);
  api.easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  api.easy_setopt(e, CURLOPT_LOW_SPEED_TIME, request.idle_timeout_s);
  if (request.total_timeout_ms > 0) api.easy_setopt(e, CURLOPT_TIMEOUT_MS, request.total_timeout_ms);
  api.easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  api.easy_setopt(e, CURLOPT_USERAGENT, "oishell-interpreter");
  api.multi_add_handle(multi.get(), e);

  int running = 1;
  while (running) {
    CURLMcode mc = api.multi_perform(multi.get(), &running);
    if (mc != CURLM_OK) {
      response.transport_error = std::string("curl_multi_perform: ") + api.multi_strerror(mc);
      break;
    }
    if (!running) break;
    curl_waitfd extra{};
    extra.fd = request.cancel_fd;
    extra.events = CURL_WAIT_POLLIN;
    mc = api.multi_poll(multi.get(), request.cancel_fd >= 0 ? &extra : nullptr, request.cancel_fd >= 0 ? 1 : 0,
                         100, nullptr);
    if (mc != CURLM_OK) {
      response.transport_error = std::string("curl_multi_poll: ") + api.multi_strerror(mc);
      break;
    }
    if (request.cancelled && request.cancelled()) {
      response.cancelled = true;
      break;
    }
    if (request.on_tick) request.on_tick();
  }
  if (!response.cancelled && response.transport_error.empty()) {
    int queued = 0;
    while (CURLMsg* msg = api.multi_info_read(multi.get(), &queued)) {
      if (msg->msg == CURLMSG_DONE && msg->data.result != CURLE_OK) {
        response.transport_error = api.easy_strerror(msg->data.result);
      }
    }
  }
  api.easy_getinfo(e, CURLINFO_RESPONSE_CODE, &response.status);
  api.multi_remove_handle(multi.get(), e);
  return response;
}

}  // namespace oishell::agent
