// live_network_change(): see live_network.h.
#include "policy/live_network.h"

#include <algorithm>
#include <map>
#include <set>

#include "policy/explain.h"
#include "policy/spec_json.h"

namespace oishell::policy {
namespace {

constexpr const char* kNewSession = "to have it, start a new session with the new policy";

// The section of the policy a key of the compiled spec comes from, and why that section is fixed once the sandbox
// runs. The network key is compared on its own (below).
struct Fixed {
  const char* section;
  const char* why;
};

const std::map<std::string, Fixed>& fixed_keys() {
  static const Fixed filesystem{
      "filesystem", "the sandbox's mounts and Landlock rules were made before anything ran inside, and both can only "
                    "narrow a running process, never widen it"};
  static const Fixed process{"process", "the seccomp filter was installed before anything ran inside and cannot be "
                                        "lifted or replaced (a filter can only be added)"};
  static const Fixed limits{"limits", "the limits were set on the sandbox's cgroup and processes when it started"};
  static const Fixed env{"env", "the environment is fixed in the processes already running"};
  static const std::map<std::string, Fixed> keys = {
      {"version", filesystem},        {"workspace", filesystem}, {"workspace_read_only", filesystem},
      {"cwd", filesystem},            {"home", filesystem},      {"home_path", filesystem},
      {"home_exposed", filesystem},   {"git", filesystem},       {"mounts", filesystem},
      {"protected_paths", filesystem}, {"landlock", filesystem}, {"hostname", process},
      {"seccomp", process},           {"limits", limits},        {"env", env},
  };
  return keys;
}

bool has_udp(const NetworkSpec& network) {
  return std::any_of(network.allow.begin(), network.allow.end(),
                     [](const HostRule& r) { return r.protocol == HostRule::Protocol::udp; });
}

// The hosts TLS is terminated for: the sandbox's certificate authority was made for these names only.
std::set<std::string> terminated_hosts(const NetworkSpec& network) {
  std::set<std::string> out;
  for (const auto& r : network.allow) {
    if (r.tls == HostRule::Tls::terminate) out.insert(r.kind == HostRule::Kind::suffix ? "*." + r.host : r.host);
  }
  return out;
}

std::vector<HttpCredential> credentials(const NetworkSpec& network) {
  std::vector<HttpCredential> out;
  for (const auto& r : network.allow) {
    for (const auto& c : r.credentials) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  return out;
}

void network_problems(const NetworkSpec& running, const NetworkSpec& proposed, std::vector<std::string>& out) {
  if (running.mode != proposed.mode) {
    out.push_back(std::string("network.mode cannot change on a running sandbox: ") +
                  (running.mode == NetMode::none
                       ? "it was started without a relay, DNS stub or proxy variables"
                       : "its relay listeners and proxy variables exist in processes already running") +
                  "; " + kNewSession);
  }
  if (running.http_proxy_port != proposed.http_proxy_port || running.socks_proxy_port != proposed.socks_proxy_port ||
      running.dns_port != proposed.dns_port) {
    out.push_back(std::string("the relay's and the DNS stub's ports cannot change on a running sandbox: their "
                              "listeners and Landlock's connect rule were made when it started; ") + kNewSession);
  }
  if (has_udp(proposed) && !has_udp(running)) {
    out.push_back(std::string("a `protocol: udp` rule cannot be added to a sandbox started without one: it has no "
                              "datagram relay socket inside (made by sandbox init before sealing); ") + kNewSession +
                  " that has the udp rule");
  }
  std::set<std::string> had = terminated_hosts(running);
  for (const auto& host : terminated_hosts(proposed)) {
    if (!had.count(host)) {
      out.push_back("`tls: terminate` for " + host + " cannot be added to a running sandbox: its certificate "
                    "authority (trusted inside since it started) is constrained to the names terminated then; " +
                    kNewSession);
    }
  }
  std::vector<HttpCredential> before = credentials(running);
  for (const auto& c : credentials(proposed)) {
    if (std::find(before.begin(), before.end(), c) != before.end()) continue;
    bool renamed = std::any_of(before.begin(), before.end(), [&](const HttpCredential& b) { return b.name == c.name; });
    out.push_back("credential `" + c.name + "` " + (renamed ? "changed" : "is new") +
                  ": a credential's placeholder (in the sandbox's environment, $" + c.env +
                  ") and its secret are made when the sandbox starts; " + kNewSession);
  }
}

}  // namespace

std::vector<std::string> live_change_problems(const SandboxSpec& running, const SandboxSpec& proposed) {
  std::vector<std::string> out;
  // The sections that must not change, compared as `oishell compile --json` writes them; the network apart (its
  // rules, a thousand of them perhaps, are compared below and diffed, not serialised).
  auto without_network = [](SandboxSpec spec) {
    spec.network = NetworkSpec{};
    return spec_to_json(spec);
  };
  auto a = without_network(running), b = without_network(proposed);
  std::set<std::string> reported;
  for (const auto& [key, fixed] : fixed_keys()) {
    bool differs = a.contains(key) != b.contains(key) || (a.contains(key) && a[key] != b[key]);
    if (!differs || !reported.insert(fixed.section).second) continue;
    out.push_back(std::string("the ") + fixed.section + " section cannot change on a running sandbox: " + fixed.why +
                  "; " + kNewSession + ". Only the network section changes live.");
  }
  network_problems(running.network, proposed.network, out);
  return out;
}

Result<LiveNetworkChange> live_network_change(const SandboxSpec& started, const NetworkSpec& current,
                                              const SandboxSpec& proposed) {
  std::vector<std::string> problems = live_change_problems(started, proposed);
  if (!problems.empty()) {
    std::string message;
    for (const auto& p : problems) message += (message.empty() ? "" : "\n") + p;
    return Status::error(message);
  }
  LiveNetworkChange change;
  change.network = proposed.network;
  SpecDiff diff = diff_network(current, proposed.network);
  change.widened = std::move(diff.only_b);
  change.narrowed = std::move(diff.only_a);
  return change;
}

}  // namespace oishell::policy
