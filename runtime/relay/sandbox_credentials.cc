#include "runtime/relay/sandbox_credentials.h"

#include <algorithm>
#include <cctype>

#include "runtime/relay/tls_openssl.h"

namespace oishell::relay {
namespace {

// Why `secret` could not go in a header as it is ("" when it can). The secret is never part of the reason.
std::string unusable(const std::string& secret) {
  if (secret.empty()) return "it is empty";
  if (std::any_of(secret.begin(), secret.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f;
      })) {
    return "it holds a control character (a line break inside it?)";
  }
  if (secret.front() == ' ' || secret.back() == ' ') return "it starts or ends with a space";
  return "";
}

}  // namespace

Result<SandboxCredentials> SandboxCredentials::load(const NetworkSpec& network, const Environment& environment,
                                                    const FileReader& read_file) {
  SandboxCredentials out;
  for (const HostRule& rule : network.allow) {
    if (rule.tls != HostRule::Tls::terminate) continue;
    for (const HttpCredential& c : rule.credentials) {
      // One name is one credential (the compiler checked that its definitions agree): one placeholder for all.
      if (std::any_of(out.bindings_.begin(), out.bindings_.end(),
                      [&](const CredentialBinding& b) { return b.name == c.name; })) {
        continue;
      }
      const std::string where = c.from_env.empty() ? "the file " + c.from_file : "oishell's variable " + c.from_env;
      std::optional<std::string> secret =
          c.from_env.empty() ? read_file(c.from_file, kMaxSecretBytes + 2) : environment(c.from_env);
      if (!secret) {
        return Status::error("credential " + c.name + ": its secret could not be read from " + where +
                             (c.from_env.empty() ? "" : " (it is not set)"));
      }
      if (!c.from_file.empty()) {
        if (secret->ends_with("\r\n")) {
          secret->resize(secret->size() - 2);
        } else if (secret->ends_with('\n')) {
          secret->pop_back();
        }
        if (secret->size() > kMaxSecretBytes) {
          return Status::error("credential " + c.name + ": " + where + " holds more than " +
                               std::to_string(kMaxSecretBytes) + " bytes, more than a secret for a header");
        }
      }
      if (std::string why = unusable(*secret); !why.empty()) {
        return Status::error("credential " + c.name + ": the secret from " + where + " cannot go in a header: " + why);
      }
      auto random = random_hex(16);
      if (!random.is_ok()) return random.status().with_context("credential " + c.name + ": placeholder");
      CredentialBinding binding;
      binding.name = c.name;
      binding.placeholder = "oishell-cred-" + c.name + "-" + *random;
      binding.secret = std::move(*secret);
      binding.header = c.header;
      binding.scheme = c.scheme;
      out.environment_.emplace_back(c.env, binding.placeholder);
      out.bindings_.push_back(std::move(binding));
    }
  }
  return out;
}

std::vector<CredentialBinding> SandboxCredentials::bindings_for(const HostRule& rule) const {
  std::vector<CredentialBinding> out;
  for (const HttpCredential& c : rule.credentials) {
    auto it = std::find_if(bindings_.begin(), bindings_.end(),
                           [&](const CredentialBinding& b) { return b.name == c.name; });
    if (it != bindings_.end()) out.push_back(*it);
  }
  return out;
}

std::vector<std::string> SandboxCredentials::all_placeholders() const {
  std::vector<std::string> out;
  for (const auto& b : bindings_) out.push_back(b.placeholder);
  return out;
}

std::string compose_trust_bundle(const std::string& system_bundle, const std::string& authority_pem) {
  std::string out = system_bundle;
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "# oishell: this sandbox's certificate authority, for the hosts its policy terminates (tls: terminate)\n";
  out += authority_pem;
  return out;
}

}  // namespace oishell::relay
