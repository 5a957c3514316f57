#pragma once
// Session: one per sandbox. Reads protocol requests (JSON lines) from an fd, routes blocks to one executor per
// language, forwards what the executors report as events, and runs the poll loop that keeps everything moving
// (non-blocking fds everywhere; the only blocking write is the event stream to the client).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/executors/command.h"
#include "runtime/executors/event_writer.h"
#include "runtime/executors/executor.h"
#include "runtime/executors/language.h"
#include "runtime/executors/protocol.h"
#include "runtime/outside/sandbox.h"

namespace oishell::executors {

struct SessionOptions {
  ExecutorOptions executor;
  bool confined = true;          // false: --sandbox none (programs looked up on the host as they are)
  std::string drivers_inside;    // the drivers directory as seen by the executors
  std::string drivers_host;      // the same directory on the host (to check the drivers exist)
  std::vector<std::string> prestart;  // languages to start before the first block (warm session)
  // A `policy` request: validates and applies it, and returns the answer (`policy.changed` or `policy.rejected`).
  // Null: the session cannot change its policy (answered `policy.rejected`).
  std::function<nlohmann::json(const PolicyRequest&)> on_policy;
};

// A language the session can run: its table entry and where its program and driver are inside.
struct AvailableLanguage {
  const Language* language = nullptr;
  std::string program;  // inside the sandbox
  std::string driver;   // inside the sandbox
};

// The languages present in this sandbox (program on its PATH, driver shipped).
std::vector<AvailableLanguage> available_languages(const SandboxSpec& spec, const SessionOptions& options);

class Session {
 public:
  Session(Sandbox& sandbox, EventOutput& events, std::vector<AvailableLanguage> languages, SessionOptions options);
  ~Session();

  // Emits `ready` (with `ready_extra` merged in: policy summary, sandbox kind, degradations), then serves requests
  // from `in_fd` until `shutdown`, or until the input ends and every block has finished. Returns the exit status.
  int run(int in_fd, const nlohmann::json& ready_extra);

 private:
  void handle_line(const std::string& line);
  void handle(const ExecRequest& request);
  void handle(RunRequest request);
  // A block or a command with this id is running or queued.
  bool id_in_use(const std::string& id);
  Executor* executor_for(const Language& language, bool create);
  Executor* executor_with_block(const std::string& id);
  bool busy() const;
  void shutdown_all();

  Sandbox& sandbox_;
  EventOutput& events_;
  std::vector<AvailableLanguage> languages_;
  SessionOptions options_;
  std::map<std::string, std::unique_ptr<Executor>> executors_;  // by language name
  std::map<std::string, std::unique_ptr<Command>> commands_;    // `run`s not yet done, by id
  bool stop_ = false;
};

}  // namespace oishell::executors
