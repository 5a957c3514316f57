#include "agent/llm/transport.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "agent/llm/http.h"

namespace oishell::agent {
namespace {

bool retryable_status(long status) { return status == 429 || status == 408 || status == 409 || status >= 500; }

// Waits `ms` unless Ctrl-C comes first; true when cancelled.
bool wait_or_cancel(long ms, StreamSink& sink) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{sink.cancel_fd(), POLLIN, 0};
    ::poll(&p, p.fd >= 0 ? 1 : 0, static_cast<int>(std::min<long>(left.count(), 100)));
    if (sink.cancelled()) return true;
    sink.on_tick();
  }
}

std::string auth_message(const LlmSettings& s, long status, const std::string& url, const std::string& detail) {
  std::string msg = api_display_name(s) + " at " + url + " refused the request (HTTP " +
                    std::to_string(status) + (status == 401 ? " Unauthorized" : " Forbidden") + ")";
  if (!detail.empty()) msg += ": " + detail;
  if (s.api_key.empty()) {
    msg += ".\nNo API key was sent: set " + s.key_variable + " or pass --api_key (or llm.api_key in a profile).";
  } else {
    msg += ".\nThe key came from " + s.key_source + "; check it is valid for this provider (" +
           s.key_variable + " or --api_key).";
  }
  return msg;
}

}  // namespace

std::string provider_display_name(Provider p) {
  switch (p) {
    case Provider::openai: return "OpenAI-compatible API";
    case Provider::anthropic: return "Anthropic API";
    case Provider::ollama: return "Ollama";
    case Provider::azure: return "Azure OpenAI API";
  }
  return "API";
}

std::string api_display_name(const LlmSettings& s) {
  if (s.service_name.empty() || s.provider == Provider::ollama) return provider_display_name(s.provider);
  return s.service_name + "'s API";
}

std::string api_error_text(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    auto it = j.find("error");
    if (it != j.end()) {
      if (it->is_string()) return it->get<std::string>();
      if (it->is_object() && it->contains("message") && (*it)["message"].is_string()) {
        return (*it)["message"].get<std::string>();
      }
    }
    if (j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  }
  std::string text = body;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.size() > 500) text = text.substr(0, 500) + "...";
  return text;
}

Result<SseOutcome> stream_sse(const LlmSettings& settings, const SseCall& call, StreamSink& sink,
                              const std::function<void(const SseEvent&)>& on_event) {
  for (int attempt = 0;; ++attempt) {
    SseParser parser(on_event);
    ClientRequest req;
    req.url = call.url;
    req.headers = call.headers;
    req.body = call.body;
    req.connect_timeout_ms = settings.connect_timeout_ms;
    req.idle_timeout_s = settings.idle_timeout_s;
    req.cancel_fd = sink.cancel_fd();
    req.cancelled = [&sink] { return sink.cancelled(); };
    req.on_tick = [&sink] { sink.on_tick(); };
    ClientResponse resp = http_perform(req, [&parser](std::string_view bytes) { parser.feed(bytes); });
    if (resp.cancelled) {
      parser.finish();
      return SseOutcome{true, ""};
    }
    const bool ok_status = resp.status >= 200 && resp.status < 300;
    if (ok_status && resp.body_bytes > 0) {
      parser.finish();
      SseOutcome out;
      if (!resp.transport_error.empty()) out.cut_reason = resp.transport_error;
      return out;
    }
    if (ok_status && resp.transport_error.empty()) {
      return Status::error(api_display_name(settings) + " at " + call.url +
                           " answered with an empty stream");
    }
    // Nothing of the answer arrived: decide whether to retry.
    std::string why;
    bool retry = false;
    if (!resp.transport_error.empty() && !ok_status && resp.status == 0) {
      why = "cannot reach " + call.url + ": " + resp.transport_error;
      retry = true;
    } else if (!resp.transport_error.empty()) {
      why = api_display_name(settings) + " at " + call.url + ": " + resp.transport_error;
      retry = true;
    } else if (resp.status == 401 || resp.status == 403) {
      return Status::error(auth_message(settings, resp.status, call.url, api_error_text(resp.error_body)));
    } else if (retryable_status(resp.status)) {
      why = api_display_name(settings) + " answered HTTP " + std::to_string(resp.status) +
            (resp.status == 429 ? " (rate limited)" : "");
      std::string detail = api_error_text(resp.error_body);
      if (!detail.empty()) why += ": " + detail;
      retry = true;
    } else {
      std::string msg = api_display_name(settings) + " at " + call.url + " answered HTTP " +
                        std::to_string(resp.status);
      std::string detail = api_error_text(resp.error_body);
      if (!detail.empty()) msg += ": " + detail;
      if (resp.status == 404) msg += "\n(is the model name `" + settings.model + "` and the API base right?)";
      return Status::error(msg);
    }
    if (!retry || attempt >= settings.max_retries) {
      return Status::error(why + (attempt > 0 ? " (gave up after " + std::to_string(attempt) + " retries)" : ""));
    }
    long delay = settings.retry_base_ms << std::min(attempt, 6);
    if (resp.retry_after_s) delay = std::min<long>(*resp.retry_after_s * 1000, 60000);
    sink.on_retry(why, delay);
    if (wait_or_cancel(delay, sink)) return SseOutcome{true, ""};
  }
}

Result<LlmResponse> stream_response(const LlmSettings& settings, const SseCall& call, StreamSink& sink,
                                    const ApplySseEvent& apply) {
  LlmResponse response;
  Status stream_error;
  auto outcome = stream_sse(settings, call, sink, [&](const SseEvent& ev) {
    if (!stream_error.is_ok()) return;
    try {
      stream_error = apply(ev, &response);
    } catch (const nlohmann::json::exception& e) {  // a chunk of unexpected shape: reported, the rest kept
      stream_error = Status::error(std::string("malformed chunk from the model's API: ") + e.what());
    }
  });
  if (!outcome) return outcome.status();
  if (!stream_error.is_ok()) {
    if (response.text.empty() && response.tool_calls.empty()) return stream_error;
    response.complete = false;
    response.cut_reason = stream_error.message();
  }
  response.cancelled = outcome->cancelled;
  if (!outcome->cut_reason.empty()) response.cut_reason = outcome->cut_reason;
  if (!response.complete && response.cut_reason.empty() && !response.cancelled) {
    response.cut_reason = "the connection closed before the answer was complete";
  }
  return response;
}

}  // namespace oishell::agent
