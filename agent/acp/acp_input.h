#pragma once
// The agent's questions, asked of the editor with session/request_permission: "run this block?" (auto_run off)
// with Run / Skip, and a network destination the policy leaves to the user with Allow once / Allow always / Deny.
// The answer is given back in the words the loop reads from a terminal ("y", "n"; "o", "a", "d"). A cancelled
// request (the editor's own outcome, or the turn's cancel) is an interrupted question. Other questions (the
// magic commands') are not asked: nobody answers them.
#include <optional>
#include <string>

#include "agent/acp/acp_display.h"
#include "agent/acp/rpc_channel.h"
#include "agent/user/user_input.h"

namespace oishell::agent::acp {

class AcpInput final : public UserInput {
 public:
  AcpInput(RpcChannel& channel, AcpDisplay& display) : channel_(channel), display_(display) {}
  void set_session(const std::string& session_id) { session_id_ = session_id; }

  std::optional<std::string> read_message(const std::string&, bool*) override { return std::nullopt; }
  std::optional<std::string> ask(const std::string& question, bool* interrupted) override;
  bool can_ask() const override { return true; }

 private:
  // The option chosen, or nullopt (cancelled, or the channel closed).
  std::optional<std::string> request(nlohmann::json tool_call, nlohmann::json options);

  RpcChannel& channel_;
  AcpDisplay& display_;
  std::string session_id_;
  unsigned asks_ = 0;
};

}  // namespace oishell::agent::acp
