#pragma once
// What a sandbox whose policy terminates TLS for some hosts (issue 16, docs/policy.md "HTTPS rules") needs before
// it starts, made by the supervisor: its certificate authority (in memory, for the terminated names only), its
// credentials (a placeholder per credential, the secrets read outside), and in the sandbox's spec the trust bundle
// (the host's own, then the sandbox's CA) bound over the host's bundle, the variables the common stacks read for a
// bundle pointed at it, and each credential's variable holding its placeholder.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"
#include "runtime/relay/sandbox_credentials.h"
#include "runtime/relay/tls_authority.h"

namespace oishell {

// The CA's validity: the longest a sandbox is served TLS for its terminated hosts. An agent session can be left
// running for days, so a month; what the sandbox's clients are shown is a leaf valid for a day, renewed
// (relay::TlsAuthority::kLeafValidity). The CA's key never leaves the supervisor's memory and dies with it.
inline constexpr std::chrono::hours kSandboxAuthorityValidity{24 * 30};

// Where distributions keep the system trust bundle, in the order they are looked for: Debian and Ubuntu, Fedora
// and RHEL, openSUSE, Alpine.
inline constexpr const char* kSystemTrustBundles[] = {"/etc/ssl/certs/ca-certificates.crt",
                                                      "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
                                                      "/etc/ssl/cert.pem"};

struct HttpsSetup {
  std::unique_ptr<relay::TlsAuthority> authority;
  relay::SandboxCredentials credentials;
  std::string bundle_path;  // inside (and on the host): the system bundle the sandbox's is bound over
};

// A file of the host, as the supervisor reads it: at most `max_bytes` (nullopt when it cannot be read).
std::optional<std::string> read_host_file(const std::string& path, size_t max_bytes);

// Nothing (and `spec` unchanged) when no allow rule terminates. Otherwise the setup, and `spec` with the bundle's
// file step and the variables added. Fails closed: no system bundle to extend, a secret that cannot be used, a CA
// that cannot be made, or a variable the policy sets otherwise.
Result<std::optional<HttpsSetup>> prepare_https(SandboxSpec& spec, const relay::SandboxCredentials::Environment& env,
                                                const relay::SandboxCredentials::FileReader& read_file);

}  // namespace oishell
