// LivePolicy: see live_policy.h.
#include "policy/live_policy.h"

#include <algorithm>

#include "policy/compiler.h"
#include "policy/load.h"

namespace oishell::policy {
namespace {

// A network section (or the rules of a patch) as a policy document of its own, so that it is validated exactly as a
// file's would be; messages name it `label`.
Result<NetworkPolicy> parse_network(const nlohmann::json& section, const std::string& label, const std::string& cwd) {
  if (!section.is_object()) return Status::error(label + ": the network section must be a mapping");
  nlohmann::json document = {{"version", kPolicyVersion}, {"network", section}};
  LoadResult loaded = load_policy_text(document.dump(), label, cwd);
  if (!loaded.ok()) return Status::error(format_diagnostics(loaded.errors));
  if (!loaded.policy.extends.empty()) return Status::error(label + ": `extends` has no place in a network section");
  return loaded.policy.network;
}

void erase_text(std::vector<HostItem>& items, const std::string& text) {
  items.erase(std::remove_if(items.begin(), items.end(), [&](const HostItem& i) { return i.rule.text == text; }),
              items.end());
}

}  // namespace

Result<LivePolicy> LivePolicy::load(PolicySource source, PolicyOverrides overrides, CompileContext context) {
  LivePolicy live;
  LoadResult loaded = load_policy(source);
  if (!loaded.ok()) return Status::error(format_diagnostics(loaded.errors));
  live.loaded_ = loaded.policy;
  std::vector<Diagnostic> errors;
  apply_overrides(loaded.policy, overrides, context, errors);
  if (!errors.empty()) return Status::error(format_diagnostics(errors));
  auto compiled = compile(loaded.policy, context);
  if (!compiled) return compiled.status();
  live.current_ = std::move(loaded.policy);
  live.started_ = std::move(compiled).value();
  live.current_spec_ = live.started_.network;
  live.source_ = std::move(source);
  live.overrides_ = std::move(overrides);
  live.context_ = std::move(context);
  return live;
}

Result<LiveNetworkChange> LivePolicy::propose(Policy proposed) {
  pending_.reset();
  pending_spec_.reset();
  auto compiled = compile(proposed, context_);
  if (!compiled) return compiled.status();
  auto change = live_network_change(started_, current_spec_, *compiled);
  if (!change) return change.status();
  pending_ = std::move(proposed);
  pending_spec_ = change->network;
  return change;
}

Result<LiveNetworkChange> LivePolicy::propose_reload() {
  LoadResult loaded = load_policy(source_);
  if (!loaded.ok()) return Status::error(format_diagnostics(loaded.errors));
  std::vector<Diagnostic> errors;
  Policy proposed = loaded.policy;
  apply_overrides(proposed, overrides_, context_, errors);
  if (!errors.empty()) return Status::error(format_diagnostics(errors));
  auto change = propose(std::move(proposed));
  if (change) loaded_ = std::move(loaded.policy);
  return change;
}

Result<LiveNetworkChange> LivePolicy::propose_network(const nlohmann::json& section) {
  auto network = parse_network(section, "policy request", context_.cwd);
  if (!network) return network.status();
  Policy proposed = loaded_;
  proposed.network = std::move(network).value();
  std::vector<Diagnostic> errors;
  apply_overrides(proposed, overrides_, context_, errors);
  if (!errors.empty()) return Status::error(format_diagnostics(errors));
  return propose(std::move(proposed));
}

Result<LiveNetworkChange> LivePolicy::propose_patch(const NetworkPatch& patch) {
  nlohmann::json section = nlohmann::json::object();
  if (!patch.allow.empty()) section["allow"] = patch.allow;
  if (!patch.deny.empty()) section["deny"] = patch.deny;
  if (patch.on_unlisted) section["on_unlisted"] = *patch.on_unlisted;
  auto rules = parse_network(section, "policy patch", context_.cwd);
  if (!rules) return rules.status();
  Policy proposed = current_;
  NetworkPolicy& net = proposed.network;
  for (const auto& text : patch.remove) {
    size_t before = net.allow.size() + net.deny.size();
    erase_text(net.allow, text);
    erase_text(net.deny, text);
    if (net.allow.size() + net.deny.size() == before) {
      return Status::error("policy patch: no allow or deny rule reads `" + text + "` (rules are removed by their text "
                           "as written)");
    }
  }
  for (const auto& item : rules->deny) {
    erase_text(net.allow, item.rule.text);
    erase_text(net.deny, item.rule.text);
    net.deny.push_back(item);
  }
  for (const auto& item : rules->allow) {
    erase_text(net.deny, item.rule.text);
    if (std::none_of(net.allow.begin(), net.allow.end(), [&](const HostItem& i) { return i.rule == item.rule; })) {
      net.allow.push_back(item);
    }
  }
  if (rules->on_unlisted.is_set()) net.on_unlisted = rules->on_unlisted;
  return propose(std::move(proposed));
}

void LivePolicy::commit() {
  if (!pending_ || !pending_spec_) return;
  current_ = std::move(*pending_);
  current_spec_ = std::move(*pending_spec_);
  pending_.reset();
  pending_spec_.reset();
}

}  // namespace oishell::policy
