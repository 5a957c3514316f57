#pragma once
// `%policy learn`: the rules that the sandbox's denials of this session point to. A destination refused only because
// no rule listed it becomes an `oishell supervise` flag (--allow-domain HOST:PORT, --allow-udp HOST:PORT), which the
// session can take by restarting its sandbox; what a rule of the policy refuses on purpose (a deny rule, the
// private-address guard, mode none) and system calls (no flag adds one) are listed as not proposed, with the policy
// line that would.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace oishell::agent {

struct PolicyProposal {
  nlohmann::json allow = nlohmann::json::array();  // the rules as a policy writes them (a live `policy` patch's allow)
  std::vector<std::string> lines;         // one line per proposed rule, for the user
  std::vector<std::string> yaml;          // the same rules as network.allow entries, for a policy file
  std::vector<std::string> not_proposed;  // denials no flag should lift, with why
};

// From `denied` and `net.denied` events (the session's, in order; repeats counted).
PolicyProposal propose_policy_rules(const std::vector<nlohmann::json>& denials);

}  // namespace oishell::agent
