#include "agent/sandbox/policy_describe.h"

#include <vector>

#include "agent/core/json_util.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string join(const json& list, const std::string& sep = ", ") {
  std::string out;
  if (!list.is_array()) return out;
  for (const auto& item : list) out += (out.empty() ? "" : sep) + (item.is_string() ? item.get<std::string>() : item.dump());
  return out;
}

// How a request carries the credential: `Authorization: Bearer $GITHUB_TOKEN`; Basic: the variable as the password.
std::string credential_form(const json& c) {
  std::string header = str(c, "header").empty() ? "Authorization" : str(c, "header");
  std::string scheme = str(c, "scheme");
  std::string var = "$" + str(c, "env");
  if (scheme == "Basic" || scheme == "basic") return "as the password of HTTP Basic auth in `" + header + "`";
  return "as `" + header + ": " + (scheme.empty() ? "" : scheme + " ") + var + "`";
}

// "api.github.com:443 (TLS terminated; GET, HEAD on /repos/**; credential `github` in $GITHUB_TOKEN, ...)".
std::string describe_rule(const json& r) {
  std::string text = str(r, "rule");
  std::vector<std::string> notes;
  if (str(r, "protocol") == "udp") notes.push_back("udp");
  if (str(r, "tls") == "terminate") {
    notes.push_back("TLS terminated");
    bool methods = r.contains("methods") && r["methods"].is_array() && !r["methods"].empty();
    bool paths = r.contains("paths") && r["paths"].is_array() && !r["paths"].empty();
    if (methods || paths) {
      notes.push_back((methods ? join(r["methods"]) : std::string("any method")) +
                      (paths ? " on " + join(r["paths"]) : std::string(" only")));
    }
    if (auto it = r.find("credentials"); it != r.end() && it->is_array()) {
      for (const auto& c : *it) {
        if (!c.is_object()) continue;
        notes.push_back("credential `" + str(c, "name") + "` in $" + str(c, "env") +
                        ", added by the sandbox outside: use the variable as if it were the token, " +
                        credential_form(c));
      }
    }
  }
  if (notes.empty()) return text;
  std::string joined;
  for (const auto& n : notes) joined += (joined.empty() ? "" : "; ") + n;
  return text + " (" + joined + ")";
}

bool has_credentials(const json& rules) {
  if (!rules.is_array()) return false;
  for (const auto& r : rules) {
    if (r.is_object() && r.contains("credentials") && r["credentials"].is_array() && !r["credentials"].empty()) {
      return true;
    }
  }
  return false;
}

std::string describe_network(const json& p) {
  std::string text = "- Network: " + str(p, "network");
  std::string allow;
  const json* rules = p.contains("network_rules") && p["network_rules"].is_array() ? &p["network_rules"] : nullptr;
  if (rules) {
    for (const auto& r : *rules) allow += (allow.empty() ? "" : ", ") + (r.is_object() ? describe_rule(r) : r.dump());
  } else if (p.contains("network_allow")) {  // a supervisor from before network_rules
    allow = join(p["network_allow"]);
  }
  if (!allow.empty()) text += "; allowed: " + allow;
  if (!str(p, "network_unlisted").empty()) {
    text += "; other destinations: " +
            std::string(str(p, "network_unlisted") == "ask" ? "the user is asked" : str(p, "network_unlisted"));
  }
  text += str(p, "network") == "none"
              ? ". Programs have no network: the sandbox has only its own loopback.\n"
              : ". Every connection a program makes, through the HTTP(S)_PROXY the sandbox sets or directly, is "
                "decided by these rules outside the sandbox; a refused one fails (EACCES, or 403 from the proxy).\n";
  if (rules && has_credentials(*rules)) {
    text += "- Credentials: each variable named above holds a placeholder (oishell-cred-...), never the secret. The "
            "sandbox's proxy, outside, puts the real secret in its place only in that header, only in HTTPS requests "
            "the rule allows to that host. Use the variable normally (curl -H, a client library's token option); "
            "do not print it, copy it elsewhere or send it to another host or in a URL: such requests are refused, "
            "and the placeholder is worth nothing outside this sandbox. For hosts with TLS terminated, programs "
            "trust the sandbox's certificate authority through the system bundle and SSL_CERT_FILE.\n";
  }
  return text;
}

}  // namespace

std::string describe_policy(const json& p) {
  if (!p.is_object()) return {};
  std::string text;
  if (!str(p, "workspace").empty()) {
    bool ro = p.value("workspace_read_only", false);
    text += "- Workspace " + str(p, "workspace") + (ro ? " (read-only)" : " (read-write)") +
            "; files elsewhere on the host are hidden or read-only, and home is a fresh empty directory.\n";
  }
  if (!str(p, "network").empty()) text += describe_network(p);
  if (p.contains("limits_text") && p["limits_text"].is_array()) {
    if (!p["limits_text"].empty()) text += "- Limits: " + join(p["limits_text"]) + "\n";
  } else if (p.contains("limits") && p["limits"].is_object() && !p["limits"].empty()) {  // a supervisor from before
    std::string limits;
    for (const auto& [k, v] : p["limits"].items()) limits += (limits.empty() ? "" : ", ") + k + " " + v.dump();
    text += "- Limits: " + limits + "\n";
  }
  for (const auto& [k, v] : p.items()) {
    if (k == "workspace" || k == "workspace_read_only" || k == "network" || k == "network_allow" ||
        k == "network_rules" || k == "network_unlisted" || k == "limits" || k == "limits_text" || k == "cwd") {
      continue;
    }
    text += "- " + k + ": " + (v.is_string() ? v.get<std::string>() : dump_json(v)) + "\n";
  }
  return text;
}

}  // namespace oishell::agent
