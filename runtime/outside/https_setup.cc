#include "runtime/outside/https_setup.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/unique_fd.h"

namespace oishell {
namespace {

// The largest system bundle read (Debian's is about 220 KB).
constexpr size_t kMaxBundleBytes = 4 * 1024 * 1024;

// Sets `name` in the sandbox's environment; an error if the policy's compile already put it there (a credential's
// variable is checked against env.set and env.pass when compiling; the bundle variables are checked here).
Status set_variable(SandboxSpec& spec, const std::string& name, const std::string& value) {
  auto it = std::find_if(spec.env.begin(), spec.env.end(), [&](const auto& kv) { return kv.first == name; });
  if (it != spec.env.end()) {
    return Status::error("tls: terminate sets " + name + " in the sandbox, which the policy sets as well (env)");
  }
  spec.env.emplace_back(name, value);
  return Status::ok();
}

}  // namespace

std::optional<std::string> read_host_file(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) return std::nullopt;
  std::string out;
  char buf[64 * 1024];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, max_bytes - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::optional<HttpsSetup>> prepare_https(SandboxSpec& spec, const relay::SandboxCredentials::Environment& env,
                                                const relay::SandboxCredentials::FileReader& read_file) {
  std::vector<std::string> names;
  for (const HostRule& rule : spec.network.allow) {
    if (rule.tls != HostRule::Tls::terminate) continue;
    std::string name = rule.kind == HostRule::Kind::suffix ? "*." + rule.host : rule.host;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  }
  if (names.empty()) return std::optional<HttpsSetup>();

  HttpsSetup setup;
  std::optional<std::string> system_bundle;
  for (const char* path : kSystemTrustBundles) {
    if ((system_bundle = read_file(path, kMaxBundleBytes + 1))) {
      setup.bundle_path = path;
      break;
    }
  }
  if (!system_bundle) {
    return Status::error("tls: terminate extends the system's trust bundle for the sandbox, and none was found (" +
                         std::string(kSystemTrustBundles[0]) + " and the other usual places)");
  }
  if (system_bundle->size() > kMaxBundleBytes) {
    return Status::error("tls: terminate: the system's trust bundle " + setup.bundle_path + " is larger than " +
                         std::to_string(kMaxBundleBytes) + " bytes");
  }
  auto authority = relay::TlsAuthority::create(names, kSandboxAuthorityValidity);
  if (!authority.is_ok()) return authority.status().with_context("the sandbox's certificate authority");
  setup.authority = std::move(authority.value());
  auto credentials = relay::SandboxCredentials::load(spec.network, env, read_file);
  if (!credentials.is_ok()) return credentials.status();
  setup.credentials = std::move(credentials.value());

  MountStep bundle;
  bundle.kind = MountStep::Kind::file;
  bundle.target = setup.bundle_path;
  bundle.source = relay::compose_trust_bundle(*system_bundle, setup.authority->certificate_pem());
  spec.mounts.push_back(std::move(bundle));
  for (const char* variable : relay::kTrustBundleVariables) OI_TRY(set_variable(spec, variable, setup.bundle_path));
  for (const auto& [name, placeholder] : setup.credentials.environment()) {
    OI_TRY(set_variable(spec, name, placeholder));
  }
  return std::optional<HttpsSetup>(std::move(setup));
}

}  // namespace oishell
