#include "agent/llm/http.h"

#include <curl/curl.h>

#include <cstdlib>
#include <memory>
#include <mutex>

namespace oishell::agent {
namespace {

constexpr size_t kMaxErrorBody = 64 * 1024;

struct Transfer {
  CURL* easy = nullptr;
  const std::function<void(std::string_view)>* on_body = nullptr;
  HttpResponse* response = nullptr;
};

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t on_write(char* data, size_t size, size_t nmemb, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * nmemb;
  long status = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
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

struct CurlSlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
struct CurlEasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct CurlMultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};

}  // namespace

HttpResponse http_perform(const HttpRequest& request, const std::function<void(std::string_view)>& on_body) {
  global_init_once();
  HttpResponse response;
  std::unique_ptr<CURL, CurlEasyDeleter> easy(curl_easy_init());
  std::unique_ptr<CURLM, CurlMultiDeleter> multi(curl_multi_init());
  if (!easy || !multi) {
    response.transport_error = "curl_easy_init: out of memory";
    return response;
  }
  Transfer transfer{easy.get(), &on_body, &response};
  std::unique_ptr<curl_slist, CurlSlistDeleter> headers;
  for (const auto& h : request.headers) {
    curl_slist* next = curl_slist_append(headers.get(), h.c_str());
    if (next) {
      (void)headers.release();
      headers.reset(next);
    }
  }
  CURL* e = easy.get();
  curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
  if (!request.body.empty()) {
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, request.connect_timeout_ms);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, request.idle_timeout_s);
  if (request.total_timeout_ms > 0) curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, request.total_timeout_ms);
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  curl_easy_setopt(e, CURLOPT_USERAGENT, "oishell-interpreter");
  curl_multi_add_handle(multi.get(), e);

  int running = 1;
  while (running) {
    CURLMcode mc = curl_multi_perform(multi.get(), &running);
    if (mc != CURLM_OK) {
      response.transport_error = std::string("curl_multi_perform: ") + curl_multi_strerror(mc);
      break;
    }
    if (!running) break;
    curl_waitfd extra{};
    extra.fd = request.cancel_fd;
    extra.events = CURL_WAIT_POLLIN;
    mc = curl_multi_poll(multi.get(), request.cancel_fd >= 0 ? &extra : nullptr, request.cancel_fd >= 0 ? 1 : 0,
                         100, nullptr);
    if (mc != CURLM_OK) {
      response.transport_error = std::string("curl_multi_poll: ") + curl_multi_strerror(mc);
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
    while (CURLMsg* msg = curl_multi_info_read(multi.get(), &queued)) {
      if (msg->msg == CURLMSG_DONE && msg->data.result != CURLE_OK) {
        response.transport_error = curl_easy_strerror(msg->data.result);
      }
    }
  }
  curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &response.status);
  curl_multi_remove_handle(multi.get(), e);
  return response;
}

}  // namespace oishell::agent
