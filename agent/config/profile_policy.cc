#include "agent/config/profile_policy.h"

#include <algorithm>
#include <cctype>

#include "agent/llm/provider.h"

namespace oishell::agent {
namespace {

constexpr const char* kWhereSecretsComeFrom =
    "a profile never holds a secret: a credential names where oishell reads it, outside the sandbox "
    "(`from_env: VARIABLE`, a variable of your environment, or `from_file: PATH`, a file the sandbox cannot see)";

bool is_variable_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// A variable interpreter reads a model's API key from: it keeps every one of them from the sandbox's supervisor
// (agent/session.cc), so a credential could not be read from it there.
bool is_model_key_variable(const std::string& name) {
  for (const auto& row : provider_table()) {
    for (const auto& variable : row.key_variables) {
      if (name == variable) return true;
    }
  }
  return false;
}

bool is_one_word(const std::string& s) {
  return std::none_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

void check_credential(const YAML::Node& c, const std::string& path, std::vector<ProfilePolicyError>* errors) {
  if (!c.IsMap()) {
    errors->push_back({c, path + ": a credential is a mapping {name, env, from_env | from_file}; " +
                              std::string(kWhereSecretsComeFrom)});
    return;
  }
  static const char* const kKeys[] = {"name", "env", "header", "scheme", "from_env", "from_file"};
  for (const auto& kv : c) {
    std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      errors->push_back({kv.first, path + ": `" + key + "` is not a credential key (name, env, header, scheme, "
                                   "from_env, from_file); " + kWhereSecretsComeFrom});
      continue;
    }
    if (!kv.second.IsScalar()) continue;  // oishell says what it expects there
    const std::string& value = kv.second.Scalar();
    if (key == "from_env" && !is_variable_name(value)) {
      errors->push_back({kv.second, path + ".from_env: `from_env` names a variable of your environment (GH_TOKEN), "
                                    "not a value; " + kWhereSecretsComeFrom});
    } else if (key == "from_env" && is_model_key_variable(value)) {
      errors->push_back({kv.second, path + ".from_env: " + value + " holds a model's API key, which interpreter "
                                    "never hands to the sandbox's supervisor; to let the code use that service "
                                    "through the sandbox, export the key under another name (SANDBOX_" + value +
                                    ") and name that"});
    } else if ((key == "header" || key == "scheme") && !is_one_word(value)) {
      // `scheme: Bearer ghp_...` would put the secret in the profile.
      errors->push_back({kv.second, path + "." + key + ": one word (`Authorization`, `Bearer`); " +
                                        kWhereSecretsComeFrom});
    }
  }
}

// Every `credentials:` list anywhere in the policy (oishell accepts them on allow rules only, and says so).
void check_credentials(const YAML::Node& n, const std::string& path, std::vector<ProfilePolicyError>* errors) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      std::string here = path + "." + key;
      if (key == "credentials" && kv.second.IsSequence()) {
        for (size_t i = 0; i < kv.second.size(); ++i) {
          check_credential(kv.second[i], here + "[" + std::to_string(i) + "]", errors);
        }
      } else if (key == "credentials" && !kv.second.IsNull()) {
        check_credential(kv.second, here, errors);
      } else {
        check_credentials(kv.second, here, errors);
      }
    }
  } else if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i) check_credentials(n[i], path + "[" + std::to_string(i) + "]", errors);
  }
}

// As oishell reads `extends` (policy/load.cc): a path when it has a '/' or a policy file's extension.
bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml") || s.ends_with(".json");
}

}  // namespace

std::string inline_policy_text(const YAML::Node& policy, const std::string& profile_path,
                               std::vector<ProfilePolicyError>* errors) {
  size_t before = errors->size();
  check_credentials(policy, "policy", errors);
  if (errors->size() != before) return {};
  YAML::Node doc = YAML::Clone(policy);
  if (!doc["version"]) doc["version"] = 1;
  if (!doc["extends"]) {
    doc["extends"] = "default";
  } else if (doc["extends"].IsScalar()) {
    std::string extends = doc["extends"].Scalar();
    if (looks_like_path(extends) && extends.front() != '/' && extends.front() != '~') {
      auto slash = profile_path.rfind('/');
      doc["extends"] = (slash == std::string::npos ? std::string(".") : profile_path.substr(0, slash)) + "/" + extends;
    }
  }
  YAML::Emitter out;
  out << doc;
  return std::string(out.c_str()) + "\n";
}

}  // namespace oishell::agent
