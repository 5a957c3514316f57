#include "runtime/relay/network_change.h"

namespace oishell::relay {

std::string refusal_after_change(const NetworkSpec& spec, const std::string& host, uint16_t port,
                                 const std::string& address, HostRule::Protocol protocol, bool uninspected) {
  NetDecision decision = decide(spec, host, port, protocol);
  if (decision.verdict != NetDecision::Verdict::allow) return "policy changed: denied now (" + decision.rule + ")";
  if (uninspected && decision.inspect) return "policy changed: now inspected (" + decision.rule + ")";
  if (auto ip = IpAddress::parse(address)) {
    std::string why = check_resolved_address(spec, *ip);
    if (!why.empty()) return "policy changed: " + why;
  }
  return "";
}

}  // namespace oishell::relay
