// The ACP server: this thread reads the editor's messages and answers all but session/prompt at once; a prompt is
// a turn of the agent, run on a thread of its own so that the editor's session/cancel and its answers to
// session/request_permission are read while the turn runs. One turn at a time: a prompt that comes while another
// session's turn runs waits for it.
#include "agent/acp/acp_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "agent/acp/acp_display.h"
#include "agent/acp/acp_input.h"
#include "agent/acp/rpc_channel.h"
#include "agent/host/atomic_file.h"
#include "agent/core/conversation.h"
#include "agent/host/interrupt.h"
#include "agent/core/loop.h"
#include "agent/user/magic.h"
#include "base/markdown_fence.h"
#include "agent/config/paths.h"
#include "oishell/build_config.h"

namespace oishell::agent::acp {
namespace {

using nlohmann::json;

constexpr int kProtocolVersion = 1;

// A session id is the name of its conversation file: letters, digits, '-' and '_' only.
bool valid_session_id(const std::string& id) {
  if (id.empty() || id.size() > 200) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

// The slash commands an editor offers (ACP's available commands): each is the agent's %command of that name, run
// by the agent, not sent to the model. /policy changes the running sandbox's network (issue 38).
const json& available_commands() {
  static const json commands = json::array(
      {{{"name", "policy"},
        {"description", "The sandbox's policy; change its network while it runs: allow HOST[:PORT], deny "
                        "HOST[:PORT], or learn (the rules this session's denials point to)"},
        {"input", {{"hint", "allow HOST[:PORT] | deny HOST[:PORT] | learn (nothing: show the policy)"}}}}});
  return commands;
}

// The %command a prompt is, when it is one of available_commands(): "/policy allow x" -> "%policy allow x".
std::optional<std::string> as_command(const std::string& text) {
  for (const auto& c : available_commands()) {
    const std::string slash = "/" + c["name"].get<std::string>();
    if (text == slash || (text.starts_with(slash) && (text[slash.size()] == ' ' || text[slash.size()] == '\t'))) {
      return "%" + text.substr(1);
    }
  }
  return std::nullopt;
}

std::string new_session_id() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tm);
  std::random_device random;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", random());
  return std::string("acp__") + stamp + "_" + suffix;
}

// The user's message from a prompt's content blocks: text as it is, a linked resource as its link, an embedded
// one as its text (fenced, with its URI). Images and audio are not offered in initialize; they are named.
std::string prompt_text(const json& blocks) {
  std::string text;
  auto add = [&text](const std::string& part) {
    if (!text.empty()) text += "\n\n";
    text += part;
  };
  for (const auto& block : blocks) {
    if (!block.is_object()) continue;
    const std::string type = block.value("type", "");
    if (type == "text") {
      add(block.value("text", ""));
    } else if (type == "resource_link") {
      add("[" + block.value("name", block.value("uri", "")) + "](" + block.value("uri", "") + ")");
    } else if (type == "resource" && block.contains("resource") && block["resource"].is_object()) {
      const json& r = block["resource"];
      if (r.contains("text") && r["text"].is_string()) {
        const std::string& text = r["text"].get_ref<const std::string&>();
        const std::string fence = fence_for(text);
        add("Contents of " + r.value("uri", "a resource") + ":\n" + fence + "\n" + text + "\n" + fence);
      } else {
        add("(a binary resource was attached: " + r.value("uri", "?") + ")");
      }
    } else if (!type.empty()) {
      add("(an attachment of type " + type + " was left out: not supported)");
    }
  }
  return text;
}

class AcpServer {
 public:
  explicit AcpServer(AcpParts parts)
      : parts_(std::move(parts)), channel_(parts_.in_fd, parts_.out_fd), display_(channel_, ""),
        input_(channel_, display_) {
    display_.set_on_activity([this] { on_activity(); });
  }

  int run();

 private:
  struct Session {
    std::unique_ptr<Agent> agent;
    std::unique_ptr<ConversationStore> store;
  };
  struct Turn {
    json id;
    std::string session_id;
    std::string text;
  };

  void handle(const json& message);
  void handle_request(const json& id, const std::string& method, const json& params);
  json initialize(const json& params);
  // The workspace for `cwd`: the first session's, which the sandbox is started in. An error for another.
  std::string claim_workspace(const json& params);
  json new_session(const json& params);
  json load_session(const json& params);
  void cancel(const json& params);
  Session& make_session(const std::string& id, std::vector<Message> history);
  void worker();
  void run_turn(const Turn& turn, Session* session);
  void on_activity();

  AcpParts parts_;
  RpcChannel channel_;
  AcpDisplay display_;
  AcpInput input_;
  std::string workspace_;
  std::map<std::string, Session> sessions_;  // touched by the worker only while it runs that session's turn

  std::mutex mutex_;
  std::condition_variable turns_ready_;
  std::deque<Turn> turns_;
  bool input_ended_ = false;
  std::string running_session_;  // the session whose turn runs ("" none)
  std::atomic<bool> cancelled_{false};
  std::chrono::steady_clock::time_point last_reraise_{};
};

json AcpServer::initialize(const json& params) {
  (void)params;  // any client version: ours is 1, and the client decides whether it speaks it
  return {{"protocolVersion", kProtocolVersion},
          {"agentCapabilities",
           {{"loadSession", true},
            {"promptCapabilities", {{"image", false}, {"audio", false}, {"embeddedContext", true}}}}},
          {"authMethods", json::array()},
          {"agentInfo", {{"name", "interpreter"}, {"title", "interpreter (oishell)"}, {"version", build::kVersion}}}};
}

std::string AcpServer::claim_workspace(const json& params) {
  const std::string cwd = params.value("cwd", "");
  struct stat st {};
  if (cwd.empty() || cwd[0] != '/') throw std::invalid_argument("`cwd` must be an absolute path");
  if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw std::invalid_argument("`cwd` " + cwd + " is not a directory");
  }
  if (workspace_.empty()) {
    // The sandbox starts on the first block, in this process's directory: that is the workspace.
    if (::chdir(cwd.c_str()) != 0) throw std::invalid_argument("cannot enter " + cwd);
    workspace_ = cwd;
    display_.set_workspace(cwd);
    parts_.executor->prestart();
  } else if (cwd != workspace_) {
    throw std::invalid_argument("this agent's sandbox is for the workspace " + workspace_ +
                                "; start another agent for " + cwd);
  }
  return workspace_;
}

AcpServer::Session& AcpServer::make_session(const std::string& id, std::vector<Message> history) {
  Session session;
  session.store = std::make_unique<ConversationStore>(conversations_dir(parts_.env));
  session.store->attach(session.store->dir() + "/" + id + ".json");
  // Made now (an attached store writes its file without making the directory); a failure shows at the first save.
  (void)make_dirs(session.store->dir());
  AgentParts p;
  p.config = parts_.config;
  if (parts_.llm) p.llm = make_client(*parts_.llm);
  p.executor = parts_.executor;
  p.display = &display_;
  p.input = &input_;
  p.store = session.store.get();
  p.history = std::move(history);
  session.agent = std::make_unique<Agent>(std::move(p));
  return sessions_[id] = std::move(session);
}

json AcpServer::new_session(const json& params) {
  claim_workspace(params);
  const std::string id = new_session_id();
  std::lock_guard lock(mutex_);
  make_session(id, {});
  return {{"sessionId", id}};
}

json AcpServer::load_session(const json& params) {
  claim_workspace(params);
  const std::string id = params.value("sessionId", "");
  if (!valid_session_id(id)) throw std::invalid_argument("no such session: `" + id + "`");
  auto loaded = load_conversation(conversations_dir(parts_.env) + "/" + id + ".json");
  if (!loaded) throw std::invalid_argument("session " + id + ": " + loaded.status().message());
  std::lock_guard lock(mutex_);
  if (!running_session_.empty()) throw std::invalid_argument("a turn is running: load the session after it");
  display_.set_session(id);
  display_.replay(*loaded);
  make_session(id, std::move(*loaded));
  return json::object();  // LoadSessionResponse: no modes, no config options
}

void AcpServer::cancel(const json& params) {
  std::lock_guard lock(mutex_);
  const std::string id = params.value("sessionId", "");
  // Turns of that session still waiting are answered `cancelled` without running.
  for (auto& turn : turns_) {
    if (turn.session_id == id) turn.text.clear();
  }
  if (running_session_ != id) return;
  cancelled_ = true;
  channel_.abandon();     // a permission request waiting for the editor ends now
  interrupt::request();   // the model's stream or the block stops, as on Ctrl-C
}

// While a cancelled turn goes on (the loop tells the model that its block was stopped and asks it again), every
// sign of life raises the interrupt again, so the turn ends at its next step.
void AcpServer::on_activity() {
  if (!cancelled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_reraise_ < std::chrono::milliseconds(50)) return;
  last_reraise_ = now;
  interrupt::request();
}

void AcpServer::handle_request(const json& id, const std::string& method, const json& params) {
  try {
    if (method == "initialize") return channel_.respond(id, initialize(params));
    if (method == "session/new" || method == "session/load") {
      json answer = method == "session/new" ? new_session(params) : load_session(params);
      const std::string session = method == "session/new" ? answer.value("sessionId", "") : params.value("sessionId", "");
      channel_.respond(id, std::move(answer));
      channel_.notify("session/update",
                      {{"sessionId", session},
                       {"update", {{"sessionUpdate", "available_commands_update"},
                                   {"availableCommands", available_commands()}}}});
      return;
    }
    if (method == "session/prompt") {
      const std::string session = params.value("sessionId", "");
      std::lock_guard lock(mutex_);
      if (!sessions_.count(session)) throw std::invalid_argument("no such session: `" + session + "`");
      if (!params.contains("prompt") || !params["prompt"].is_array()) {
        throw std::invalid_argument("`prompt` must be an array of content blocks");
      }
      std::string text = prompt_text(params["prompt"]);
      if (text.empty()) throw std::invalid_argument("the prompt has no text");
      turns_.push_back({id, session, std::move(text)});
      turns_ready_.notify_all();
      return;
    }
    channel_.respond_error(id, rpc_error::method_not_found, "method not found: " + method);
  } catch (const std::invalid_argument& e) {
    channel_.respond_error(id, rpc_error::invalid_params, e.what());
  } catch (const json::exception& e) {
    channel_.respond_error(id, rpc_error::invalid_params, std::string("bad parameters: ") + e.what());
  }
}

void AcpServer::handle(const json& message) {
  const bool has_id = message.contains("id") && !message["id"].is_null();
  if (!message.contains("method")) {
    if (has_id && (message.contains("result") || message.contains("error"))) (void)channel_.deliver(message);
    return;  // a response to nothing we asked: dropped
  }
  if (!message["method"].is_string()) {
    if (has_id) channel_.respond_error(message["id"], rpc_error::invalid_request, "`method` must be a string");
    return;
  }
  const std::string method = message["method"];
  const json params = message.contains("params") && message["params"].is_object() ? message["params"] : json::object();
  if (!has_id) {  // a notification: never answered
    if (method == "session/cancel") cancel(params);
    return;
  }
  handle_request(message["id"], method, params);
}

void AcpServer::run_turn(const Turn& turn, Session* session) {
  if (turn.text.empty()) {  // cancelled before it ran
    channel_.respond(turn.id, {{"stopReason", "cancelled"}});
    return;
  }
  if (auto command = as_command(turn.text)) {  // the agent's own: no model needed
    display_.set_session(turn.session_id);
    input_.set_session(turn.session_id);
    handle_magic(*session->agent, *command);
    channel_.respond(turn.id, {{"stopReason", cancelled_ ? "cancelled" : "end_turn"}});
    return;
  }
  if (!session->agent->llm()) {
    channel_.respond_error(turn.id, rpc_error::internal_error,
                           "no model is configured: start `interpreter --acp` with --model (and --api_base) or a "
                           "profile that names one");
    return;
  }
  display_.set_session(turn.session_id);
  input_.set_session(turn.session_id);
  const TurnEnd end = session->agent->respond(turn.text);
  const char* reason = "end_turn";
  if (cancelled_) {
    reason = "cancelled";
  } else if (end == TurnEnd::max_turns) {
    reason = "max_turn_requests";
  } else if (end == TurnEnd::interrupted) {
    reason = "cancelled";  // a Ctrl-C to the agent's process
  }
  channel_.respond(turn.id, {{"stopReason", reason}});
}

void AcpServer::worker() {
  while (true) {
    Turn turn;
    Session* session = nullptr;
    {
      std::unique_lock lock(mutex_);
      turns_ready_.wait(lock, [&] { return !turns_.empty() || input_ended_; });
      if (turns_.empty()) return;
      turn = std::move(turns_.front());
      turns_.pop_front();
      running_session_ = turn.session_id;
      cancelled_ = false;
      session = &sessions_.at(turn.session_id);  // a map's elements stay where they are as others are added
    }
    interrupt::drain();
    run_turn(turn, session);
    std::lock_guard lock(mutex_);
    running_session_.clear();
    cancelled_ = false;
  }
}

int AcpServer::run() {
  std::thread turns([this] { worker(); });
  while (auto incoming = channel_.read()) {
    if (!incoming->error.empty()) {
      channel_.respond_error(nullptr, rpc_error::parse_error, "parse error: " + incoming->error);
      continue;
    }
    handle(incoming->message);
  }
  // The editor closed the connection: what runs stops, what waits is dropped.
  {
    std::lock_guard lock(mutex_);
    input_ended_ = true;
    turns_.clear();
    if (!running_session_.empty()) {
      cancelled_ = true;
      interrupt::request();
    }
  }
  channel_.close();
  turns_ready_.notify_all();
  turns.join();
  parts_.executor->shutdown();
  return 0;
}

}  // namespace

int run_acp(AcpParts parts) { return AcpServer(std::move(parts)).run(); }

}  // namespace oishell::agent::acp
