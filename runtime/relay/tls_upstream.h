#pragma once
// The relay's TLS client towards the real upstream, for the connections it terminates (tls_authority.h has the
// sandbox-facing side): the relay, not the sandbox, now decides whether the upstream is who it claims to be, so
// verification is always on and names the host the policy allowed.
#include <string>

#include "base/status.h"
#include "runtime/relay/tls_openssl.h"

namespace oishell::relay {

// A client context that verifies the upstream's certificate chain (SSL_VERIFY_PEER: a failed verification fails
// the handshake). Trust: the system's store (OpenSSL's default paths) when `ca_file` is empty, else only the
// certificates in the PEM file `ca_file` (a policy's `upstream_ca`, for a private service or a test), the system
// store not at all. TLS 1.2 at least, no renegotiation; ALPN offers "http/1.1" alone, the one protocol the relay
// reads.
[[nodiscard]] Result<SslCtxPtr> upstream_client_context(const std::string& ca_file);

// Sets `host` (a DNS name; IP literals are refused: terminating rules name hosts) as the server name sent (SNI)
// and as the name the certificate must carry: a certificate for another name fails verification
// (X509_V_ERR_HOSTNAME_MISMATCH). Partial wildcards ("f*.example.com") do not match. Before the handshake.
[[nodiscard]] Status set_upstream_host(SSL* ssl, const std::string& host);

}  // namespace oishell::relay
