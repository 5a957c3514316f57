#pragma once
// The credentials of one sandbox (issue 16, docs/policy.md "HTTPS rules"): for each credential its terminating
// rules declare, a placeholder made for this sandbox ("oishell-cred-NAME-<32 hex>") and the secret, read outside
// the sandbox when it starts. The sandbox gets the placeholders in the variables the credentials name; the relay
// gets the bindings of each rule, to put the secret in place of the placeholder (credential_rewrite.h).
//
// Fails closed: a secret that cannot be read, is empty, or could not travel in a header as it is (a control
// character, space around it) stops the sandbox from starting, with a message that names the credential and where
// its secret was looked for, never the secret. One trailing newline of a secret's file is not part of the secret
// (`echo token > file` writes one).
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"
#include "runtime/relay/credential_rewrite.h"

namespace oishell::relay {

// The longest secret read from a file (a token, a key; not a keystore).
inline constexpr size_t kMaxSecretBytes = 16 * 1024;

class SandboxCredentials {
 public:
  // `environment`: oishell's own environment (for `from_env`), e.g. std::getenv; `read_file`: a file outside the
  // sandbox, at most `max_bytes` of it (nullopt when it cannot be read).
  using Environment = std::function<std::optional<std::string>(const std::string& name)>;
  using FileReader = std::function<std::optional<std::string>(const std::string& path, size_t max_bytes)>;
  static Result<SandboxCredentials> load(const NetworkSpec& network, const Environment& environment,
                                         const FileReader& read_file);

  // What the sandbox's environment gets: {env, placeholder} per credential.
  const std::vector<std::pair<std::string, std::string>>& environment() const { return environment_; }
  // The credentials `rule` declares, bound for the relay (empty for a rule that declares none).
  std::vector<CredentialBinding> bindings_for(const HostRule& rule) const;
  // Every placeholder of this sandbox: any of them outside its binding refuses the request.
  std::vector<std::string> all_placeholders() const;
  bool empty() const { return bindings_.empty(); }

 private:
  std::vector<CredentialBinding> bindings_;  // one per credential name
  std::vector<std::pair<std::string, std::string>> environment_;
};

// The trust bundle the sandbox reads (bound over the system's, runtime/outside/https_setup.h, and named by
// kTrustBundleVariables): the host's own bundle, so that every other TLS host still verifies, and the sandbox's
// certificate authority after it.
std::string compose_trust_bundle(const std::string& system_bundle, const std::string& authority_pem);

// The variables the common stacks read for a CA bundle, each pointed at the sandbox's bundle: OpenSSL (SSL_CERT_FILE),
// Python requests and pip, curl, Node (extra certificates on top of its own), git.
inline constexpr const char* kTrustBundleVariables[] = {"SSL_CERT_FILE",        "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
                                                        "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",     "PIP_CERT"};

}  // namespace oishell::relay
