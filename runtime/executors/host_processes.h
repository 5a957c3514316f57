#pragma once
// HostProcesses: the Sandbox interface without confinement. Processes run on the host as the caller, with the
// spec's environment, working directory and process groups, and nothing else of the policy. It is what
// `oishell supervise --sandbox none` uses (the agent's `--sandbox none`), and it keeps the executors testable
// apart from the real sandbox. Children die with the supervisor (PDEATHSIG); shutdown() kills every process
// group it started.
#include <sys/types.h>

#include <map>
#include <memory>

#include "runtime/outside/sandbox.h"

namespace oishell::executors {

class HostProcesses final : public Sandbox {
 public:
  static Result<std::unique_ptr<HostProcesses>> create(const SandboxSpec& spec, EventSink& events);
  ~HostProcesses() override;

  Result<Spawned> spawn(const SpawnRequest& request) override;
  // Host processes are started on demand only (the executor host never asks for a first process).
  Result<Spawned> first_process() override { return Status::error("first_process: not offered without a sandbox"); }
  Status signal(uint64_t id, int sig) override;
  int wait_fd() const override { return epoll_.get(); }
  std::optional<ExitInfo> next_exit() override;
  Result<ExitInfo> wait(uint64_t id) override;
  void answer_ask(uint64_t ask_id, relay::AskAnswer answer) override;
  const std::vector<std::string>& degradations() const override { return degradations_; }
  void shutdown() override;

 private:
  struct Child {
    pid_t pid = -1;
    UniqueFd pidfd;
    bool exited = false;
  };
  HostProcesses(const SandboxSpec& spec, UniqueFd epoll);
  std::optional<ExitInfo> reap(uint64_t id, Child& child, bool block);

  SandboxSpec spec_;
  UniqueFd epoll_;
  std::map<uint64_t, Child> children_;
  std::vector<ExitInfo> kept_;  // exits seen by wait() for other ids, returned by next_exit()
  uint64_t next_id_ = 1;
  std::vector<std::string> degradations_;
  bool shut_down_ = false;
};

}  // namespace oishell::executors
