#include "policy/summary.h"

#include "policy/units.h"

namespace oishell {
namespace {

nlohmann::json rule_summary(const HostRule& rule) {
  nlohmann::json r = {{"rule", rule.text},
                      {"protocol", std::string(protocol_name(rule.protocol))},
                      {"tls", std::string(tls_name(rule.tls))}};
  if (!rule.methods.empty()) r["methods"] = rule.methods;
  if (!rule.paths.empty()) r["paths"] = rule.paths;
  if (!rule.credentials.empty()) {
    nlohmann::json credentials = nlohmann::json::array();
    // Where the placeholder is and where the relay puts the secret; from_env/from_file (where the secret is read
    // from outside) stay out: the sandbox has no use for them.
    for (const auto& c : rule.credentials) {
      nlohmann::json one = {{"name", c.name}, {"env", c.env}, {"header", c.header}};
      if (!c.scheme.empty()) one["scheme"] = c.scheme;
      credentials.push_back(std::move(one));
    }
    r["credentials"] = std::move(credentials);
  }
  return r;
}

}  // namespace

nlohmann::json policy_summary(const SandboxSpec& spec, uint64_t block_wall_ms) {
  nlohmann::json limits = nlohmann::json::object();
  if (block_wall_ms) limits["wall_time_ms"] = block_wall_ms;
  if (spec.limits.memory_bytes) limits["memory_bytes"] = *spec.limits.memory_bytes;
  if (spec.limits.pids) limits["pids"] = *spec.limits.pids;
  if (spec.limits.cpu_time_seconds) limits["cpu_time_seconds"] = *spec.limits.cpu_time_seconds;
  // The same limits as people write them ("memory 4 GiB"), for the agent's description and the web page.
  nlohmann::json limits_text = nlohmann::json::array();
  if (spec.limits.memory_bytes) limits_text.push_back("memory " + policy::format_size(*spec.limits.memory_bytes));
  if (block_wall_ms) limits_text.push_back("wall time " + policy::format_duration_ms(block_wall_ms) + " per block");
  if (spec.limits.pids) limits_text.push_back(std::to_string(*spec.limits.pids) + " processes");
  if (spec.limits.cpu_time_seconds) {
    limits_text.push_back("CPU time " + policy::format_duration_ms(*spec.limits.cpu_time_seconds * 1000));
  }
  nlohmann::json allow = nlohmann::json::array();
  nlohmann::json rules = nlohmann::json::array();
  for (const auto& rule : spec.network.allow) {
    allow.push_back(rule.text);
    rules.push_back(rule_summary(rule));
  }
  const char* network = spec.network.mode == NetMode::none ? "none"
                        : spec.network.allow_all            ? "proxy, all public"
                                                            : "proxy, allowlist";
  return {{"workspace", spec.workspace},
          {"workspace_read_only", spec.workspace_read_only},
          {"cwd", spec.cwd},
          {"network", network},
          {"network_allow", allow},
          {"network_rules", rules},
          {"network_unlisted", spec.network.on_unlisted == OnUnlisted::ask ? "ask" : "deny"},
          {"limits", limits},
          {"limits_text", limits_text}};
}

}  // namespace oishell
