#pragma once
// The certificate authority of one sandbox, for the relay's TLS termination (issue 16): where a policy rule has the
// relay read HTTPS (to apply HTTP rules or add credentials), the relay answers the sandbox's TLS with a leaf this
// authority mints for the host, and the sandbox trusts this authority's certificate (certificate_pem()) alone for
// that purpose. The relay's own connection to the real upstream is tls_upstream.h's.
//
// Made in memory when the sandbox starts, never written anywhere: the CA's private key stays inside the object
// (no accessor, no export), and dies with it. The CA certificate carries a critical nameConstraints extension that
// permits only the hosts the policy terminates, so even a leaf signed for another name (by a bug here) would not
// verify at a client that enforces name constraints (OpenSSL, NSS, Go's crypto/x509 and rustls's webpki do).
#include <chrono>
#include <cstddef>
#include <ctime>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "policy/net_rules.h"
#include "runtime/relay/tls_openssl.h"

namespace oishell::relay {

class TlsAuthority {
 public:
  // A server certificate for one host, signed by the authority, and its private key (the leaf's own, not the
  // CA's). Immutable once minted; shared by every connection to that host.
  struct Leaf {
    std::string host;  // normalised: lower case, no trailing dot
    X509Ptr certificate;
    EvpPkeyPtr key;
  };

  // Leaves kept per authority. A suffix rule (`*.example.org`) lets the sandbox ask for any number of names, each
  // costing a key and a certificate here; past this many the oldest leaf is dropped (and minted again if asked
  // for again), so memory stays bounded whatever the sandbox sends.
  static constexpr size_t kMaxCachedLeaves = 1024;
  // The clock skew allowed for: certificates are valid from this long before they were made.
  static constexpr std::chrono::seconds kClockSkew = std::chrono::hours(1);
  // A leaf is valid for a day from when it is minted (never past the CA's end), and minted afresh when a cached one
  // has less than kLeafRenewal left: a session of weeks (an agent left running) keeps being served, while what a
  // sandbox's client holds never stays valid for long.
  static constexpr std::chrono::seconds kLeafValidity = std::chrono::hours(24);
  static constexpr std::chrono::seconds kLeafRenewal = std::chrono::hours(6);
  // The wall clock certificates are dated by (std::time); tests pass their own.
  using Clock = std::function<std::time_t()>;

  // `permitted_names`: the hosts the relay terminates, each an exact host ("api.github.com") or a suffix pattern
  // ("*.example.org": every name below example.org, at any depth, but not example.org itself), as policy host rules
  // write them (policy/net_rules.h), without ports; IP literals and CIDRs are refused (terminating rules name
  // hosts). At least one. `validity`: how long the CA certificate is valid from now, at most 10 years: the longest
  // the sandbox may live and still be served (https_setup.h's kSandboxAuthorityValidity); leaves are shorter
  // (kLeafValidity). Past the CA's end, leaf_for() fails, saying so.
  //
  // The CA certificate's nameConstraints permit the DNS subtree of each name ("api.github.com", "example.org").
  // RFC 5280 makes a DNS subtree cover the name and all its subdomains, so the CA could sign example.org itself
  // for `*.example.org`, and x.api.github.com for `api.github.com`. That is harmless: leaf_for() mints only for the
  // names the rules match, which is what the relay terminates; the constraint is the second line, bounding what a
  // leaf could claim if the first one failed.
  [[nodiscard]] static Result<std::unique_ptr<TlsAuthority>> create(const std::vector<std::string>& permitted_names,
                                                                     std::chrono::seconds validity,
                                                                     Clock clock = {});
  ~TlsAuthority();
  TlsAuthority(const TlsAuthority&) = delete;
  TlsAuthority& operator=(const TlsAuthority&) = delete;

  // The CA certificate, PEM: what the sandbox trusts.
  const std::string& certificate_pem() const { return certificate_pem_; }

  // The leaf for `host`, minted at the first call and cached by its normalised name (at most kMaxCachedLeaves), and
  // minted again once the cached one is within kLeafRenewal of its end.
  // Refused: a host none of the permitted names matches (the relay must never mint for a name the policy does not
  // terminate), an IP literal, anything that is not a valid DNS name. Thread-safe.
  [[nodiscard]] Result<std::shared_ptr<const Leaf>> leaf_for(const std::string& host);

  // A context for the relay's client-facing side (the sandbox's TLS client connects to it):
  //   - TLS 1.2 at least, no renegotiation;
  //   - the certificate is chosen from the ClientHello's server name (SNI): the leaf for that name. No SNI, or a
  //     name leaf_for() refuses, fails the handshake with an unrecognized_name alert (the refusal's reason is put
  //     on the error queue, so SSL_do_handshake's failure says why);
  //   - ALPN: "http/1.1" when the client offers it, else "http/1.0" (curl --http1.0); a client that offers ALPN
  //     but neither (h2 only) gets a no_application_protocol alert, a clear failure instead of a stall on a
  //     protocol the relay does not speak. A client that sends no ALPN speaks HTTP/1.1 and is served.
  // Precondition: this authority outlives the context and every SSL made from it (its callbacks call leaf_for()).
  [[nodiscard]] Result<SslCtxPtr> server_context();

 private:
  TlsAuthority() = default;
  Result<std::shared_ptr<const Leaf>> mint(const std::string& host);  // mutex_ held
  static int on_server_name(SSL* ssl, int* alert, void* self);

  std::vector<HostRule> permitted_;
  Clock clock_;
  EvpPkeyPtr key_;  // the CA's private key: never leaves this object
  X509Ptr certificate_;
  std::string certificate_pem_;

  std::mutex mutex_;  // guards leaves_ and order_
  std::unordered_map<std::string, std::shared_ptr<const Leaf>> leaves_;
  std::deque<std::string> order_;  // leaves_' hosts, oldest first
};

}  // namespace oishell::relay
