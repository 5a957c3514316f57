#include "agent/sandbox/policy_learn.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace oishell::agent {
namespace {

// The rules that refuse a destination only because nothing listed it (policy/net_rules.cc decide()).
bool unlisted(const std::string& rule) {
  return rule.rfind("on_unlisted", 0) == 0 || rule.rfind("udp: no udp rule", 0) == 0 || rule.rfind("ask", 0) == 0;
}

std::string times(int n) { return std::to_string(n) + (n == 1 ? " time" : " times"); }

}  // namespace

PolicyProposal propose_policy_rules(const std::vector<nlohmann::json>& denials) {
  std::map<std::tuple<std::string, int, bool>, int> proposed;  // (host, port, udp) -> denials
  std::map<std::string, int> refused;                          // line -> denials
  for (const auto& e : denials) {
    if (!e.is_object()) continue;
    const std::string event = e.value("event", "");
    if (event == "net.denied") {
      const std::string host = e.value("host", "");
      const int port = e.contains("port") && e["port"].is_number_integer() ? e["port"].get<int>() : 0;
      const std::string rule = e.value("rule", "");
      const bool udp = e.value("protocol", "") == "udp";
      // A name refused by the DNS stub (protocol dns, port 0) was refused before any port was known: the rule it
      // points to is the name at any port.
      if (host.empty() || port < 0 || port > 65535 || (port == 0 && e.value("protocol", "") != "dns")) continue;
      if (unlisted(rule)) {
        ++proposed[{host, port, udp}];
      } else {
        ++refused[host + (port ? ":" + std::to_string(port) : "") + " (" + (rule.empty() ? e.value("reason", "refused") : rule) +
                  ": refused on purpose; change the policy file if it should not be)"];
      }
    } else if (event == "fs.denied") {  // a path: the supervisor's sentence names the rule and the line to add
      const std::string path = e.value("path", "");
      if (path.empty()) continue;
      const std::string allow = e.value("allow", "");
      ++refused[e.value("access", "read") + " " + path + " (" + e.value("rule", "?") + "; " +
                (allow.empty() ? std::string("no policy line allows it") : "to allow it: " + allow) + ")"];
    } else if (event == "denied" && e.value("kind", "") == "syscall") {
      const std::string name = e.value("syscall", "");
      if (name.empty()) continue;
      if (std::string why = e.value("not_allowable", ""); !why.empty()) {  // the floor (policy/seccomp_sets.h)
        ++refused["system call " + name + " (" + e.value("set", "?") + "; no policy can allow it: " + why + ")"];
        continue;
      }
      ++refused["system call " + name + " (" + e.value("set", "?") +
                "; no flag adds it: `process: {allow_syscalls: [" + name + "]}` in a policy file lifts every check "
                "of that call)"];
    }
  }
  PolicyProposal out;
  for (const auto& [key, count] : proposed) {
    const auto& [host, port, udp] = key;
    if (port == 0 && proposed.count({host, 0, false}) && std::any_of(proposed.begin(), proposed.end(), [&](auto& p) {
          return std::get<0>(p.first) == host && std::get<1>(p.first) != 0;
        })) {
      continue;  // its name was refused first, then a port: the port's rule covers the name
    }
    const std::string where = port ? host + ":" + std::to_string(port) : host;
    if (port) {
      nlohmann::json rule = {{"host", host}, {"ports", {port}}};
      if (udp) rule["protocol"] = "udp";
      out.allow.push_back(std::move(rule));
    } else {
      out.allow.push_back(host);
    }
    out.lines.push_back("allow " + where + (udp ? " (udp)" : "") + ": refused " + times(count) +
                        (port ? ", no rule listed it"
                              : " at name lookup, before a port was known (any port: narrow it to the one you use)"));
    out.yaml.push_back("    - " + (port ? "{host: " + host + ", ports: [" + std::to_string(port) + "]" +
                                         (udp ? ", protocol: udp" : "") + "}"
                                   : host));
  }
  for (const auto& [line, count] : refused) out.not_proposed.push_back(line + ", " + times(count));
  return out;
}

}  // namespace oishell::agent
