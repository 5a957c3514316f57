#include "agent/server/oi_server.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "agent/host/interrupt.h"
#include "agent/server/admission.h"
#include "base/http/bearer_token.h"
#include "agent/server/context.h"
#include "agent/server/websocket.h"
#include "oishell/build_config.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)
namespace {

using nlohmann::json;

constexpr uint16_t kDefaultPort = 8000;   // OI's Server.DEFAULT_PORT

// SIGTERM stops the server as Ctrl-C does: it becomes a SIGINT, which the agent's handler counts.
void on_sigterm(int) {
  int saved = errno;
  ::raise(SIGINT);
  errno = saved;
}

std::string json_text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

std::string json_response(int status, const json& body) {
  return http_response(status, {{"Content-Type", "application/json"}}, json_text(body));
}

json setting_value(const ServerContext& ctx, const std::string& name, bool* found) {
  const AgentConfig& c = ctx.parts.config;
  *found = true;
  auto opt = [](const auto& o) { return o ? json(*o) : json(); };
  if (name == "auto_run") return c.auto_run;
  if (name == "offline") return c.offline;
  if (name == "safe_mode") return c.safe_mode;
  if (name == "max_output") return c.max_output;
  if (name == "max_turns") return c.max_turns;
  if (name == "custom_instructions") return c.custom_instructions;
  if (name == "system_message") return c.system_message;
  if (name == "sandbox") return c.sandbox;
  if (name == "context_window") return opt(c.context_window);
  if (name == "max_tokens") return opt(c.max_tokens);
  if (name == "temperature") return opt(c.temperature);
  if (name == "model") return ctx.parts.llm ? json(ctx.parts.llm->model) : json();
  if (name == "llm") {  // never the key
    if (!ctx.parts.llm) return json();
    return {{"model", ctx.parts.llm->model}, {"api_base", ctx.parts.llm->api_base},
            {"supports_functions", c.supports_functions}, {"context_window", opt(c.context_window)},
            {"max_tokens", opt(c.max_tokens)}, {"temperature", opt(c.temperature)}};
  }
  *found = false;
  return json();
}

// POST /settings: every key is checked before any is applied.
std::string update_settings(ServerContext& ctx, const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return http_json_error(400, "the body must be a JSON object");
  AgentConfig c = ctx.parts.config;
  for (const auto& [key, value] : j.items()) {
    if (key == "custom_instructions" || key == "system_message") {
      if (!value.is_string()) return http_json_error(422, "`" + key + "` must be a string");
      (key == "custom_instructions" ? c.custom_instructions : c.system_message) = value.get<std::string>();
    } else if (key == "max_output" || key == "max_turns") {
      if (!value.is_number_integer() || value.get<long>() < (key == "max_output" ? 1 : 0) ||
          value.get<long>() > 1000000000) {
        return http_json_error(422, "`" + key + "` must be a whole number in range");
      }
      (key == "max_output" ? c.max_output : c.max_turns) = static_cast<int>(value.get<long>());
    } else if (key == "auto_run" || key == "safe_mode" || key == "sandbox" || key == "policy" || key == "offline" ||
               key == "computer" || key == "llm" || key == "model") {
      return http_json_error(403, "the setting `" + key +
                                      "` is fixed when the server starts (flags and profile); a client cannot change it");
    } else {
      return http_json_error(404, "setting `" + key + "` not found");
    }
  }
  ctx.parts.config = c;
  return json_response(200, {{"status", "success"}});
}

std::string home_page(const ServerContext& ctx) {
  std::string base = ctx.listener.url();
  std::string ws = "ws" + base.substr(4) + "/";
  return http_response(
      200, {{"Content-Type", "text/plain; charset=utf-8"}},
      std::string("interpreter ") + build::kVersion + " server (Open Interpreter's protocol)\n\n" +
          "websocket:            " + ws + "  (LMC messages; {\"auth\": TOKEN} first, or the X-API-KEY header)\n" +
          "OpenAI-compatible:    POST " + base + "/openai/chat/completions\n" +
          "settings:             GET " + base + "/settings/NAME, POST " + base + "/settings\n" +
          "heartbeat:            GET " + base + "/heartbeat\n");
}

// An admitted request (admission.h: Host, Origin and the token checked), served on the agent's thread.
void route(ServerContext& ctx, Connection& conn, const HttpRequest& req) {
  const std::string& path = req.path;
  const std::string& method = req.method;
  auto only = [&](const char* allowed) {
    if (method == allowed) return true;
    (void)conn.write_all(http_response(405, {{"Allow", allowed}, {"Content-Type", "application/json"}},
                                       json_text({{"detail", "Method Not Allowed"}})));
    return false;
  };
  if (path == "/") {
    if (only("GET")) (void)conn.write_all(home_page(ctx));
  } else if (path == "/heartbeat") {
    if (only("GET")) (void)conn.write_all(json_response(200, {{"status", "alive"}}));
  } else if (path == "/openai/chat/completions") {
    if (only("POST")) serve_chat_completions(ctx, conn, req);
  } else if (path == "/openai/models") {
    if (only("GET")) {
      (void)conn.write_all(json_response(
          200, {{"object", "list"},
                {"data", json::array({{{"id", "open-interpreter"}, {"object", "model"}, {"owned_by", "oishell"}}})}}));
    }
  } else if (path == "/settings") {
    if (only("POST")) (void)conn.write_all(update_settings(ctx, req.body));
  } else if (path.rfind("/settings/", 0) == 0) {
    if (only("GET")) {
      std::string name = path.substr(10);
      bool found = false;
      json value = setting_value(ctx, name, &found);
      (void)conn.write_all(found ? json_response(200, {{name, value}})
                                 : http_json_error(404, "setting `" + name + "` not found"));
    }
  } else {
    (void)conn.write_all(http_json_error(404, "Not Found"));
  }
}

void serve_connection(ServerContext& ctx, Admitted admitted) {
  Connection& conn = *admitted.conn;
  conn.set_wake_fd(interrupt::wake_fd());
  if (admitted.websocket) {
    serve_websocket(ctx, conn, std::move(admitted.frames));
  } else {
    route(ctx, conn, admitted.parser.request());
  }
}

}  // namespace

bool ServerContext::signalled() const {
  unsigned count = interrupt::count();
  return count - interrupts_at_start > interrupts_requested.load();
}

void ServerContext::stop_agent() {
  interrupts_requested.fetch_add(1);
  interrupt::request();
}

void ServerContext::settle() {
  if (!signalled()) interrupt::drain();
}

std::unique_ptr<Agent> ServerContext::make_agent(Display* display, UserInput* input, std::vector<Message> history) {
  AgentParts p;
  p.config = parts.config;
  if (parts.llm) p.llm = make_client(*parts.llm);
  p.executor = parts.executor;
  p.display = display;
  p.input = input;
  p.store = nullptr;  // conversations over the server are the client's to keep
  p.history = std::move(history);
  return std::make_unique<Agent>(std::move(p));
}

int run_server(ServerParts parts) {
  interrupt::install();
  ServerContext ctx;
  ctx.parts = std::move(parts);
  const EnvLookup& env = ctx.parts.env;
  std::string host = "127.0.0.1";
  if (auto h = env("INTERPRETER_HOST"); h && !h->empty()) host = *h;
  int port = kDefaultPort;
  if (auto p = env("INTERPRETER_PORT"); p && !p->empty()) {
    char* end = nullptr;
    long v = std::strtol(p->c_str(), &end, 10);
    if (*end != '\0' || v < 0 || v > 65535) {
      std::fprintf(stderr, "interpreter --server: INTERPRETER_PORT=%s is not a port number\n", p->c_str());
      return 2;
    }
    port = static_cast<int>(v);
  }
  bool own_token = false;
  if (auto k = env("INTERPRETER_API_KEY"); k && !k->empty()) {
    ctx.token = *k;
    own_token = true;
  } else {
    ctx.token = generate_token();
  }
  auto listener = listen_loopback(host, port);
  if (!listener) {
    std::fprintf(stderr, "interpreter --server: %s\n", listener.status().message().c_str());
    return listener.status().errno_value() == 0 ? 2 : 1;
  }
  ctx.listener = std::move(*listener);

  struct sigaction term {};
  term.sa_handler = on_sigterm;
  sigemptyset(&term.sa_mask);
  ::sigaction(SIGTERM, &term, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  ctx.interrupts_at_start = interrupt::count();

  std::string url = ctx.listener.url();
  std::printf("interpreter --server: listening on %s\n", url.c_str());
  std::printf("  websocket:  ws%s/  (Open Interpreter's LMC messages)\n", url.substr(4).c_str());
  std::printf("  OpenAI API: %s/openai  (POST /openai/chat/completions)\n", url.c_str());
  if (own_token) {
    std::printf("  token:      from INTERPRETER_API_KEY\n");
  } else {
    std::printf("  token:      %s\n", ctx.token.c_str());
  }
  std::printf("  Send the token as X-API-KEY or Authorization: Bearer (a websocket may send {\"auth\": TOKEN} first).\n"
              "  Code runs in the %s; auto_run %s. Ctrl-C stops the server.\n",
              ctx.parts.executor->description().c_str(), ctx.parts.config.auto_run ? "on" : "off");
  if (!ctx.parts.llm) std::printf("  No model is configured: requests for the agent are answered 503.\n");
  if (own_token && ctx.token.size() < 16) {
    std::printf("  Warning: INTERPRETER_API_KEY is short (%zu characters); a long random one is safer.\n",
                ctx.token.size());
  }
  std::fflush(stdout);
  ctx.parts.executor->prestart();

  {
    // Connections are accepted and admitted on other threads (admission.h); the agent serves the admitted ones
    // here, one at a time, on this thread.
    AdmissionPolicy policy;
    policy.token = ctx.token;
    policy.origins = own_origins(ctx.listener);
    if (auto allowed = env("INTERPRETER_ALLOWED_ORIGINS"); allowed && !allowed->empty()) {
      policy.origins = with_configured_origins(std::move(policy.origins), *allowed);
    }
    Admissions admissions(std::move(policy));
    admissions.start_accepting(ctx.listener.fd.get());
    while (!ctx.signalled()) {
      pollfd fds[2] = {{admissions.ready_fd(), POLLIN, 0}, {interrupt::wake_fd(), POLLIN, 0}};
      int n = ::poll(fds, 2, -1);
      if (n < 0 && errno != EINTR) break;
      if (ctx.signalled()) break;
      if (fds[1].revents) ctx.settle();
      if (!(fds[0].revents & POLLIN)) continue;
      std::optional<Admitted> next = admissions.take();
      if (!next) continue;
      serve_connection(ctx, std::move(*next));
      ctx.settle();
    }
  }  // (stops accepting, and every admission still running)
  std::printf("interpreter --server: stopped\n");
  std::fflush(stdout);
  ctx.parts.executor->shutdown();
  return 0;
}

}  // namespace oishell::agent::server
