#pragma once
// The relay's TLS client towards the real upstream, for the connections it terminates (tls_authority.h has the
// sandbox-facing side): the relay, not the sandbox, now decides whether the upstream is who it claims to be, so
// verification is always on and names the host the policy allowed.
#include <cstddef>
#include <string>

#include "base/status.h"
#include "runtime/relay/tls_openssl.h"

namespace oishell::relay {

// Upstream hosts whose last session a context keeps for resumption (below); past this many the oldest is dropped.
inline constexpr size_t kMaxUpstreamSessions = 256;

// A client context that verifies the upstream's certificate chain (SSL_VERIFY_PEER: a failed verification fails
// the handshake). Trust: the system's store (OpenSSL's default paths) when `ca_file` is empty, else only the
// certificates in the PEM file `ca_file` (a policy's `upstream_ca`, for a private service or a test), the system
// store not at all. TLS 1.2 at least, no renegotiation; ALPN offers "http/1.1" alone, the one protocol the relay
// reads.
//
// Sessions are resumed: the context keeps, per host (the server name the relay sent), the newest session an upstream
// gave on a connection whose certificate verified, and offer_upstream_session() offers it to the next connection
// to that host. A resumed handshake skips the certificate and its chain: the server proves instead that it holds
// the secret of the earlier session, which only the server verified then has. A session never crosses hosts, nor
// contexts (each trust, system store or one `upstream_ca`, has its own). As OpenSSL has it, a session whose
// connection ended without close_notify is not resumed (the terminator sends one when it ends a connection).
[[nodiscard]] Result<SslCtxPtr> upstream_client_context(const std::string& ca_file);

// Before the handshake, after set_upstream_host(): offers the session kept for `host` by `ssl`'s context, if it has
// a resumable one. Returns whether it offered one (the server may still decline it: a full handshake then).
bool offer_upstream_session(SSL* ssl, const std::string& host);

// Sets `host` (a DNS name; IP literals are refused: terminating rules name hosts) as the server name sent (SNI)
// and as the name the certificate must carry: a certificate for another name fails verification
// (X509_V_ERR_HOSTNAME_MISMATCH). Partial wildcards ("f*.example.com") do not match. Before the handshake.
[[nodiscard]] Status set_upstream_host(SSL* ssl, const std::string& host);

}  // namespace oishell::relay
