// The embedding protocol's server: this thread reads requests and answers `stop` and `answer` at once; the others
// run in order on a thread of their own, so that a stop or a confirmation's answer is read while a response runs.
#include "agent/embed/embed_server.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "agent/acp/rpc_channel.h"
#include "agent/core/code_extract.h"
#include "agent/host/interrupt.h"
#include "agent/llm/curl_api.h"
#include "agent/core/loop.h"
#include "agent/config/model_setup.h"
#include "agent/server/lmc_display.h"
#include "agent/core/system_prompt.h"
#include "oishell/build_config.h"

namespace oishell::agent::embed {
namespace {

using nlohmann::json;

constexpr int kProtocolVersion = 1;

const char* turn_end_name(TurnEnd end) {
  switch (end) {
    case TurnEnd::done: return "done";
    case TurnEnd::interrupted: return "interrupted";
    case TurnEnd::error: return "error";
    case TurnEnd::max_turns: return "max_turns";
    case TurnEnd::declined: return "declined";
    case TurnEnd::no_model: return "no_model";
    case TurnEnd::budget: return "budget";
  }
  return "error";
}

// Reads one setting of a known type; an error names it and says what it should be.
template <typename T>
T setting(const json& value, const std::string& name, const char* expected) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) throw std::invalid_argument("setting `" + name + "` must be " + expected);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) throw std::invalid_argument("setting `" + name + "` must be " + expected);
  } else if constexpr (std::is_integral_v<T>) {
    if (!value.is_number_integer() || value.get<long long>() <= 0 || value.get<long long>() > 1'000'000'000) {
      throw std::invalid_argument("setting `" + name + "` must be " + expected);
    }
  } else {
    if (!value.is_number()) throw std::invalid_argument("setting `" + name + "` must be " + expected);
  }
  return value.get<T>();
}

std::vector<std::string> string_list(const json& value, const std::string& name) {
  if (!value.is_array()) throw std::invalid_argument("setting `" + name + "` must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : value) out.push_back(setting<std::string>(item, name, "a list of strings"));
  return out;
}

// Open Interpreter's settings, by its names, onto the session's configuration. null leaves the flags' value (or
// clears an optional one). An unknown name or a wrong type is an error (std::invalid_argument).
void apply_settings(const json& settings, const AgentConfig& base, AgentConfig* c) {
  if (!settings.is_object()) throw std::invalid_argument("`settings` must be an object");
  for (const auto& [key, value] : settings.items()) {
    const bool unset = value.is_null();
    if (key == "model") {
      c->model.model = unset ? base.model.model : setting<std::string>(value, key, "a string");
    } else if (key == "api_base") {
      c->model.api_base = unset ? base.model.api_base : setting<std::string>(value, key, "a string");
    } else if (key == "api_key") {
      c->model.api_key = unset ? base.model.api_key : setting<std::string>(value, key, "a string");
      c->model.api_key_origin = unset ? base.model.api_key_origin : "interpreter.llm.api_key";
    } else if (key == "api_version") {
      c->model.api_version = unset ? base.model.api_version : setting<std::string>(value, key, "a string");
    } else if (key == "temperature") {
      c->temperature = unset ? base.temperature : std::optional(setting<double>(value, key, "a number"));
    } else if (key == "context_window") {
      c->context_window = unset ? base.context_window : std::optional(setting<int>(value, key, "a positive integer"));
    } else if (key == "max_tokens") {
      c->max_tokens = unset ? base.max_tokens : std::optional(setting<int>(value, key, "a positive integer"));
    } else if (key == "max_budget") {
      c->max_budget = unset ? base.max_budget : std::optional(setting<double>(value, key, "a number"));
      if (c->max_budget && !(*c->max_budget > 0)) throw std::invalid_argument("setting `max_budget` must be positive");
    } else if (key == "supports_vision") {
      c->supports_vision = unset ? base.supports_vision : std::optional(setting<bool>(value, key, "true or false"));
    } else if (key == "supports_functions") {
      c->supports_functions = unset ? base.supports_functions : setting<bool>(value, key, "true or false");
    } else if (key == "auto_run") {
      c->auto_run = unset ? base.auto_run : setting<bool>(value, key, "true or false");
    } else if (key == "loop") {
      c->loop = unset ? base.loop : setting<bool>(value, key, "true or false");
    } else if (key == "offline") {
      c->offline = unset ? base.offline : setting<bool>(value, key, "true or false");
    } else if (key == "verbose") {
      c->verbose = unset ? base.verbose : setting<bool>(value, key, "true or false");
    } else if (key == "system_message") {
      // The default instructions read back unchanged are no custom message.
      std::string text = unset ? base.system_message : setting<std::string>(value, key, "a string");
      c->system_message = text == default_instructions() ? "" : text;
    } else if (key == "custom_instructions") {
      c->custom_instructions = unset ? base.custom_instructions : setting<std::string>(value, key, "a string");
    } else if (key == "loop_message") {
      c->loop_message = unset ? base.loop_message : setting<std::string>(value, key, "a string");
    } else if (key == "loop_breakers") {
      c->loop_breakers = unset ? base.loop_breakers : string_list(value, key);
    } else if (key == "max_output") {
      c->max_output = unset ? base.max_output : setting<int>(value, key, "a positive integer");
    } else if (key == "max_turns") {
      c->max_turns = unset ? base.max_turns : setting<int>(value, key, "a positive integer");
    } else if (key == "languages") {
      c->languages = unset ? base.languages : string_list(value, key);
    } else {
      throw std::invalid_argument("unknown setting `" + key + "`");
    }
  }
}

// What decides the model client: a change makes a new one.
std::string model_key(const AgentConfig& c) {
  json k = {c.model.model,       c.model.api_base, c.model.api_key,         c.model.api_version, c.model.provider,
            c.temperature.value_or(-1), c.max_tokens.value_or(0), c.supports_vision.value_or(false),
            c.supports_vision.has_value(), c.supports_functions, c.max_budget.value_or(0)};
  return k.dump();
}

class EmbedServer;

// The agent's questions: only "run this block?" is answered (by the embedding program's `answer`); a network
// destination the policy leaves to the user is denied, and no other question is asked.
class EmbedInput final : public UserInput {
 public:
  EmbedInput(EmbedServer& server, server::LmcDisplay& display) : server_(server), display_(display) {}
  std::optional<std::string> read_message(const std::string&, bool*) override { return std::nullopt; }
  std::optional<std::string> ask(const std::string& question, bool* interrupted) override;
  bool can_ask() const override { return true; }

 private:
  EmbedServer& server_;
  server::LmcDisplay& display_;
};

class EmbedServer {
 public:
  explicit EmbedServer(EmbedParts parts)
      : parts_(std::move(parts)), channel_(parts_.in_fd, parts_.out_fd),
        display_([this](const json& chunk) { on_chunk(chunk); }), input_(*this, display_) {}

  int run();
  // A confirmation: waits for `answer` ("y" / "n"), or a stop or the end of the input (nullopt, *interrupted).
  std::optional<std::string> await_answer(bool* interrupted);

 private:
  void handle(const json& request);
  void worker();
  void serve(const json& request);
  void chat(const json& id, const json& request);
  void run_code(const json& id, const json& request);
  void reset(const json& id);
  void on_chunk(const json& chunk);
  void send_error(const json& id, const std::string& message) {
    json event = {{"event", "error"}, {"message", message}};
    if (!id.is_null()) event["id"] = id;
    (void)channel_.send(event);
  }
  std::unique_ptr<Agent> make_agent(const AgentConfig& config, std::unique_ptr<LlmClient> llm,
                                    std::vector<Message> history);

  EmbedParts parts_;
  acp::RpcChannel channel_;
  server::LmcDisplay display_;
  EmbedInput input_;
  // The model client's settings, made again when what decides them changes.
  std::string model_key_;
  std::optional<LlmSettings> llm_;
  std::set<std::string> languages_used_;  // executors that ran code since the last reset
  json current_id_;                       // the request whose chunks are sent (worker thread)
  std::string last_error_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<json> requests_;
  bool input_ended_ = false;
  bool busy_ = false;
  bool stopping_ = false;            // `stop` came for the request that runs
  std::optional<bool> answer_;       // the answer to the confirmation awaited
  std::chrono::steady_clock::time_point last_reraise_{};
};

std::optional<std::string> EmbedInput::ask(const std::string&, bool* interrupted) {
  if (interrupted) *interrupted = false;
  if (!display_.take_confirmation_pending()) return std::nullopt;
  return server_.await_answer(interrupted);
}

std::optional<std::string> EmbedServer::await_answer(bool* interrupted) {
  std::unique_lock lock(mutex_);
  // An answer that came before this wait (right after the confirmation chunk) counts: it is cleared only when used
  // and when a request starts.
  changed_.wait(lock, [&] { return answer_.has_value() || stopping_ || input_ended_; });
  if (!answer_) {
    if (interrupted) *interrupted = true;
    return std::nullopt;
  }
  return *std::exchange(answer_, std::nullopt) ? "y" : "n";
}

// Every chunk goes out with its request's id. While a stopped response goes on (the loop tells the model that its
// block was stopped and would ask it again), each sign of life raises the interrupt again, so it ends at its next
// step.
void EmbedServer::on_chunk(const json& chunk) {
  if (chunk.value("role", "") == "server" && chunk.value("type", "") == "error") {
    last_error_ = chunk.value("content", "");
  }
  (void)channel_.send({{"event", "chunk"}, {"id", current_id_}, {"chunk", chunk}});
  std::lock_guard lock(mutex_);
  if (!stopping_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_reraise_ < std::chrono::milliseconds(50)) return;
  last_reraise_ = now;
  interrupt::request();
}

std::unique_ptr<Agent> EmbedServer::make_agent(const AgentConfig& config, std::unique_ptr<LlmClient> llm,
                                               std::vector<Message> history) {
  AgentParts p;
  p.config = config;
  p.llm = std::move(llm);
  p.executor = parts_.executor;
  p.display = &display_;
  p.input = &input_;
  p.history = std::move(history);
  return std::make_unique<Agent>(std::move(p));
}

void EmbedServer::chat(const json& id, const json& request) {
  AgentConfig config = parts_.config;
  std::vector<Message> history;
  std::string text;
  try {
    if (request.contains("settings")) apply_settings(request["settings"], parts_.config, &config);
    const json messages = request.value("messages", json::array());
    if (!messages.is_array()) throw std::invalid_argument("`messages` must be a list of messages");
    for (const auto& m : messages) {
      Message message;
      std::string error;
      if (!from_json(m, &message, &error)) throw std::invalid_argument("`messages`: " + error);
      history.push_back(std::move(message));
    }
    const json message = request.value("message", json());
    if (message.is_string()) {
      text = message.get<std::string>();
    } else if (message.is_null()) {  // answer the conversation as it is: its last message is the user's
      if (history.empty() || history.back().role != "user" || history.back().type != "message") {
        throw std::invalid_argument("no message, and the conversation does not end with the user's");
      }
      text = history.back().content;
      history.pop_back();
    } else {
      throw std::invalid_argument("`message` must be a string or null");
    }
  } catch (const std::exception& e) {
    (void)channel_.send({{"event", "end"}, {"id", id}, {"status", "error"}, {"error", e.what()},
                         {"messages", request.value("messages", json::array())}});
    return;
  }
  const std::string key = model_key(config);
  if (key != model_key_ || !llm_) {
    auto chosen = choose_model(config, parts_.env, display_, input_, *parts_.keys);
    if (!chosen || !*chosen) {
      std::string why = !chosen ? chosen.status().message()
                                : "no model: set interpreter.llm.model (and its key, e.g. OPENAI_API_KEY or "
                                  "interpreter.llm.api_key; interpreter.llm.api_base for a local server)";
      json messages = json::array();
      for (const auto& m : history) messages.push_back(to_json(m));
      (void)channel_.send({{"event", "end"}, {"id", id}, {"status", !chosen ? "error" : "no_model"},
                           {"error", why}, {"messages", messages}});
      return;
    }
    llm_ = **chosen;
    model_key_ = key;
  }
  auto agent = make_agent(config, make_client(*llm_), std::move(history));
  last_error_.clear();
  const TurnEnd end = agent->respond(text);
  json messages = json::array();
  for (const auto& m : agent->messages()) {
    if (m.type == "code") languages_used_.insert(canonical_language(m.format));
    messages.push_back(to_json(m));
  }
  json event = {{"event", "end"}, {"id", id}, {"status", turn_end_name(end)}, {"messages", messages}};
  if (end == TurnEnd::error && !last_error_.empty()) event["error"] = last_error_;
  (void)channel_.send(event);
}

void EmbedServer::run_code(const json& id, const json& request) {
  const json language = request.value("language", json()), code = request.value("code", json());
  if (!language.is_string() || !code.is_string()) {
    (void)channel_.send({{"event", "end"}, {"id", id}, {"status", "error"},
                         {"error", "`language` and `code` must be strings"}});
    return;
  }
  languages_used_.insert(canonical_language(language.get<std::string>()));
  auto agent = make_agent(parts_.config, nullptr, {});
  last_error_.clear();
  bool stop_turn = false;
  (void)agent->run_block(language.get<std::string>(), code.get<std::string>(), "", &stop_turn);
  // The block could not be run (the sandbox did not start, ...): the error the display showed.
  json event = {{"event", "end"}, {"id", id}, {"status", last_error_.empty() ? "done" : "error"}};
  if (!last_error_.empty()) event["error"] = last_error_;
  (void)channel_.send(event);
}

// Waits for the executors being reset to come back: a block sent before the supervisor saw the old one exit would
// go to it and be killed with it.
class RestartWatch final : public ExecObserver {
 public:
  explicit RestartWatch(std::set<std::string> languages) : waiting_(std::move(languages)) {}
  void on_output(std::string_view, std::string_view) override {}
  void on_notice(const json& event) override {
    const std::string name = event.value("event", "");
    if (name == "executor_restarted" || name == "executor_exited") waiting_.erase(event.value("language", ""));
  }
  AskDecision on_ask(const json&) override { return AskDecision::deny; }
  bool done() const { return waiting_.empty(); }

 private:
  std::set<std::string> waiting_;
};

void EmbedServer::reset(const json& id) {
  std::string problems;
  std::set<std::string> sent;
  for (const auto& language : languages_used_) {
    if (Status s = parts_.executor->reset(language); !s.is_ok()) {
      problems += (problems.empty() ? "" : "; ") + s.message();
    } else {
      sent.insert(language);
    }
  }
  languages_used_.clear();
  RestartWatch watch(std::move(sent));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!watch.done() && std::chrono::steady_clock::now() < until) {
    parts_.executor->poll(watch);  // reads for up to 20 ms
    if (!watch.done()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  json event = {{"event", "end"}, {"id", id}, {"status", problems.empty() ? "done" : "error"}};
  if (!problems.empty()) event["error"] = problems;
  (void)channel_.send(event);
}

void EmbedServer::serve(const json& request) {
  const json id = request.value("id", json());
  const std::string op = request.value("op", "");
  current_id_ = id;
  if (op == "chat") return chat(id, request);
  if (op == "run") return run_code(id, request);
  if (op == "reset") return reset(id);
  if (op == "languages") {
    if (Status s = parts_.executor->start(); !s.is_ok()) {
      (void)channel_.send({{"event", "end"}, {"id", id}, {"status", "error"}, {"error", s.message()}});
      return;
    }
    (void)channel_.send({{"event", "languages"}, {"id", id}, {"languages", parts_.executor->languages()}});
    return;
  }
}

void EmbedServer::worker() {
  while (true) {
    json request;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !requests_.empty() || input_ended_; });
      if (requests_.empty()) return;
      request = std::move(requests_.front());
      requests_.pop_front();
      busy_ = true;
      stopping_ = false;
      answer_.reset();
    }
    interrupt::drain();
    serve(request);
    std::lock_guard lock(mutex_);
    busy_ = false;
    stopping_ = false;
  }
}

void EmbedServer::handle(const json& request) {
  const json id = request.value("id", json());
  const json op = request.value("op", json());
  if (!op.is_string()) return send_error(id, "a request needs `op`, a string");
  const std::string name = op.get<std::string>();
  if (name == "stop") {
    std::lock_guard lock(mutex_);
    if (!busy_) return;
    stopping_ = true;
    changed_.notify_all();  // a confirmation awaited ends
    interrupt::request();   // the model's stream or the block stops, as on Ctrl-C
    return;
  }
  if (name == "answer") {
    const json run = request.value("run", json());
    if (!run.is_boolean()) return send_error(id, "`answer` needs `run`: true or false");
    std::lock_guard lock(mutex_);
    answer_ = run.get<bool>();
    changed_.notify_all();
    return;
  }
  if (name != "chat" && name != "run" && name != "reset" && name != "languages") {
    return send_error(id, "unknown op `" + name + "`");
  }
  if (id.is_null()) return send_error(id, "`" + name + "` needs an `id`");
  std::lock_guard lock(mutex_);
  requests_.push_back(request);
  changed_.notify_all();
}

int EmbedServer::run() {
  (void)channel_.send({{"event", "ready"}, {"protocol", kProtocolVersion}, {"version", build::kVersion},
                       {"sandbox", parts_.executor->description()},
                       {"system_message", std::string(default_instructions())}});
  parts_.executor->prestart();  // the sandbox comes up while the program gets its first message ready
  // So does libcurl (its ~30 libraries and TLS set-up are tens of milliseconds of the first answer); the first
  // model request waits for this load if it is not done (curl_api() initialises once, thread-safe).
  std::thread curl_loader([] { (void)curl_api(); });
  std::thread requests([this] { worker(); });
  while (auto incoming = channel_.read()) {
    if (!incoming->error.empty()) {
      send_error(nullptr, "bad request: " + incoming->error);
      continue;
    }
    handle(incoming->message);
  }
  // The embedding program is gone: what runs stops, what waits is dropped.
  {
    std::lock_guard lock(mutex_);
    input_ended_ = true;
    requests_.clear();
    if (busy_) {
      stopping_ = true;
      interrupt::request();
    }
    changed_.notify_all();
  }
  requests.join();
  curl_loader.join();
  parts_.executor->shutdown();
  return 0;
}

}  // namespace

int run_embed(EmbedParts parts) { return EmbedServer(std::move(parts)).run(); }

}  // namespace oishell::agent::embed
