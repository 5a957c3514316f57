#pragma once
// The sandbox's policy in a few lines of text, for the model (the system prompt) and the user (`%policy`), from the
// summary `oishell supervise` sends in its `ready` event (policy/summary.h): the workspace, the network with what
// each allowed host may be sent (methods, paths) and which credentials the sandbox holds for it, the limits.
// A credential is named with the variable that holds its placeholder and the header it goes in; the summary holds
// no secret, and neither does this text. Pure.
#include <string>

#include <nlohmann/json.hpp>

namespace oishell::agent {

// One "- ..." line per subject. Keys it does not know are shown as "- key: value".
[[nodiscard]] std::string describe_policy(const nlohmann::json& summary);

}  // namespace oishell::agent
