#include "runtime/relay/tls_upstream.h"

#include <optional>

#include "base/terminal_text.h"
#include "policy/net_rules.h"

namespace oishell::relay {

Result<SslCtxPtr> upstream_client_context(const std::string& ca_file) {
  SslCtxPtr context(SSL_CTX_new(TLS_client_method()));
  if (!context) return openssl_error("SSL_CTX_new(TLS_client_method)");
  if (SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION) != 1) {
    return openssl_error("SSL_CTX_set_min_proto_version(TLS 1.2)");
  }
  SSL_CTX_set_options(context.get(), SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  // A new context trusts nothing: either call below is the whole of its trust.
  if (ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(context.get()) != 1) return openssl_error("SSL_CTX_set_default_verify_paths");
  } else if (SSL_CTX_load_verify_locations(context.get(), ca_file.c_str(), nullptr) != 1) {
    return openssl_error("SSL_CTX_load_verify_locations(" + ca_file + ")").with_context("upstream CA file");
  }
  static constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  if (SSL_CTX_set_alpn_protos(context.get(), kAlpn, sizeof kAlpn) != 0) {  // 0 is success here
    return openssl_error("SSL_CTX_set_alpn_protos(http/1.1)");
  }
  return context;
}

Status set_upstream_host(SSL* ssl, const std::string& host) {
  std::optional<std::string> name = normalise_host(host);
  if (!name || IpAddress::parse(*name)) {
    return Status::error("upstream TLS host `" + escape_for_terminal(host) + "`: not a DNS name");
  }
  if (SSL_set_tlsext_host_name(ssl, name->c_str()) != 1) {
    return openssl_error("SSL_set_tlsext_host_name(" + *name + ")");
  }
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (SSL_set1_host(ssl, name->c_str()) != 1) return openssl_error("SSL_set1_host(" + *name + ")");
  return Status::ok();
}

}  // namespace oishell::relay
