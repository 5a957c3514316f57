#include "runtime/relay/tls_authority.h"

#include <openssl/err.h>
#include <openssl/rand.h>

#include <algorithm>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>

#include "base/terminal_text.h"

namespace oishell::relay {
namespace {

// A CA lives as long as its sandbox; the bound only keeps the date arithmetic far from any overflow.
constexpr std::chrono::seconds kMaxValidity = std::chrono::hours(24 * 3653);
// RFC 5280's upper bound on a commonName (ub-common-name); a longer host is named by the subjectAltName alone.
constexpr size_t kMaxCommonName = 64;

// A name from the sandbox (the TLS server name), made safe to put in a message someone prints.
std::string shown(std::string_view host) { return "`" + escape_for_terminal(host) + "`"; }

Result<EvpPkeyPtr> new_p256_key() {
  EvpPkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return openssl_error("EVP_EC_gen(P-256)");
  return key;
}

Result<X509NamePtr> name_with_common_name(const std::string& common_name) {
  X509NamePtr name(X509_NAME_new());
  if (!name || X509_NAME_add_entry_by_NID(name.get(), NID_commonName, MBSTRING_UTF8,
                                          reinterpret_cast<const unsigned char*>(common_name.data()),
                                          static_cast<int>(common_name.size()), -1, 0) != 1) {
    return openssl_error("X509_NAME_add_entry_by_NID(CN=" + common_name + ")");
  }
  return name;
}

// A version 3 certificate for `key`'s public half, named `subject`, issued by `issuer`, valid from `not_before` to
// `not_after`, with a random serial: 128 bits from OpenSSL's CSPRNG with the top one set, so it is positive, never
// zero, and has 127 random bits (RFC 5280 allows 20 octets; CA/Browser Forum asks 64 random bits). No extensions
// yet, not signed.
Result<X509Ptr> new_certificate(EVP_PKEY* key, const X509_NAME* subject, const X509_NAME* issuer,
                                const ASN1_TIME* not_before, const ASN1_TIME* not_after) {
  X509Ptr certificate(X509_new());
  if (!certificate) return openssl_error("X509_new");
  BignumPtr serial(BN_new());
  if (!serial || BN_rand(serial.get(), 128, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) != 1) {
    return openssl_error("BN_rand(128 bits)");
  }
  if (X509_set_version(certificate.get(), X509_VERSION_3) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate.get())) == nullptr ||
      X509_set_subject_name(certificate.get(), subject) != 1 ||
      X509_set_issuer_name(certificate.get(), issuer) != 1 ||
      X509_set1_notBefore(certificate.get(), not_before) != 1 ||
      X509_set1_notAfter(certificate.get(), not_after) != 1 || X509_set_pubkey(certificate.get(), key) != 1) {
    return openssl_error("filling in a certificate");
  }
  return certificate;
}

// An extension from OpenSSL's configuration syntax ("critical,CA:TRUE,pathlen:0"). Only for constant values: the
// names that come from policies and clients go in as typed GENERAL_NAMEs (add_dns_names, add_name_constraints),
// never through a text syntax where a ',' or ':' in them would mean something.
Status add_extension(X509* certificate, X509V3_CTX& context, int nid, const char* value) {
  X509ExtensionPtr extension(X509V3_EXT_nconf_nid(nullptr, &context, nid, value));
  if (!extension) return openssl_error(std::string("X509V3_EXT_nconf_nid(") + OBJ_nid2sn(nid) + ", " + value + ")");
  if (X509_add_ext(certificate, extension.get(), -1) != 1) return openssl_error("X509_add_ext");  // adds a copy
  return Status::ok();
}

// A dNSName general name. `host` is a validated, normalised DNS name (ASCII).
Result<GeneralNamePtr> dns_name(const std::string& host) {
  GeneralNamePtr name(GENERAL_NAME_new());
  ASN1_IA5STRING* text = ASN1_IA5STRING_new();
  if (!name || !text || ASN1_STRING_set(text, host.data(), static_cast<int>(host.size())) != 1) {
    ASN1_IA5STRING_free(text);
    return openssl_error("dNSName " + host);
  }
  GENERAL_NAME_set0_value(name.get(), GEN_DNS, text);  // `name` owns `text` now
  return name;
}

// subjectAltName: dNSName = host. Critical when the subject is empty (RFC 5280 4.2.1.6).
Status add_subject_alt_name(X509* certificate, const std::string& host, bool critical) {
  GeneralNamesPtr names(GENERAL_NAMES_new());
  if (!names) return openssl_error("GENERAL_NAMES_new");
  auto name = dns_name(host);
  if (!name) return name.status();
  if (sk_GENERAL_NAME_push(names.get(), name->get()) == 0) return openssl_error("sk_GENERAL_NAME_push");
  (void)name->release();  // `names` owns it now
  if (X509_add1_ext_i2d(certificate, NID_subject_alt_name, names.get(), critical ? 1 : 0, X509V3_ADD_DEFAULT) != 1) {
    return openssl_error("X509_add1_ext_i2d(subjectAltName)");
  }
  return Status::ok();
}

// nameConstraints, critical: permitted DNS subtrees, one per distinct rule host, nothing excluded.
Status add_name_constraints(X509* certificate, const std::vector<HostRule>& rules) {
  NameConstraintsPtr constraints(NAME_CONSTRAINTS_new());
  if (!constraints) return openssl_error("NAME_CONSTRAINTS_new");
  constraints->permittedSubtrees = sk_GENERAL_SUBTREE_new_null();
  if (!constraints->permittedSubtrees) return openssl_error("sk_GENERAL_SUBTREE_new_null");
  std::set<std::string> hosts;
  for (const HostRule& rule : rules) hosts.insert(rule.host);
  for (const std::string& host : hosts) {
    GeneralSubtreePtr subtree(GENERAL_SUBTREE_new());
    auto name = dns_name(host);
    if (!subtree) return openssl_error("GENERAL_SUBTREE_new");
    if (!name) return name.status();
    GENERAL_NAME_free(subtree->base);
    subtree->base = name->release();
    if (sk_GENERAL_SUBTREE_push(constraints->permittedSubtrees, subtree.get()) == 0) {
      return openssl_error("sk_GENERAL_SUBTREE_push");
    }
    (void)subtree.release();  // the stack owns it now
  }
  if (X509_add1_ext_i2d(certificate, NID_name_constraints, constraints.get(), 1, X509V3_ADD_DEFAULT) != 1) {
    return openssl_error("X509_add1_ext_i2d(nameConstraints)");
  }
  return Status::ok();
}

// A permitted name as create() takes it: a policy host rule, exact or suffix, without ports.
Result<HostRule> parse_permitted(const std::string& text) {
  auto rule = HostRule::parse(text);
  if (!rule) return rule.status();
  if (rule->kind == HostRule::Kind::ip_cidr) {
    return Status::error("`" + text + "`: an IP address or range (terminating rules name hosts)");
  }
  if (!rule->ports.empty()) return Status::error("`" + text + "`: a port (a certificate names a host, not a port)");
  return rule;
}

// ALPN, server side: "http/1.1" when the client offers it, else "http/1.0" (curl --http1.0 offers only that; the
// relay reads HTTP/1.0 requests as well), else a fatal no_application_protocol alert. The relay reads HTTP/1.x
// only; a client that offers only h2 (or anything else) would otherwise be accepted without ALPN and stall or fail
// obscurely when its first h2 frame meets an HTTP/1.1 parser. The selection points into the client's own list, as
// OpenSSL requires of `out`.
int select_http1(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
                 unsigned int in_length, void* /*arg*/) {
  for (std::string_view wanted : {std::string_view("http/1.1"), std::string_view("http/1.0")}) {
    for (unsigned int at = 0; at < in_length;) {
      unsigned int length = in[at];
      if (length == 0 || at + 1 + length > in_length) break;  // malformed; OpenSSL has checked it already
      std::string_view protocol(reinterpret_cast<const char*>(in + at + 1), length);
      if (protocol == wanted) {
        *out = in + at + 1;
        *out_length = static_cast<unsigned char>(length);
        return SSL_TLSEXT_ERR_OK;
      }
      at += 1 + length;
    }
  }
  push_openssl_reason("the client's ALPN offers no http/1.1 nor http/1.0 (the relay does not speak h2)");
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

}  // namespace

Result<std::unique_ptr<TlsAuthority>> TlsAuthority::create(const std::vector<std::string>& permitted_names,
                                                           std::chrono::seconds validity, Clock clock) {
  const std::string context = "making the sandbox's TLS authority";
  if (permitted_names.empty()) {
    // RFC 5280 has no nameConstraints that permit nothing (permittedSubtrees holds at least one subtree), and an
    // authority that may sign nothing has no use.
    return Status::error(context + ": no host names to terminate");
  }
  if (validity <= std::chrono::seconds(0) || validity > kMaxValidity) {
    return Status::error(context + ": validity of " + std::to_string(validity.count()) +
                         " s is not between 1 s and 10 years");
  }
  std::unique_ptr<TlsAuthority> authority(new TlsAuthority());
  authority->clock_ = clock ? std::move(clock) : Clock([] { return std::time(nullptr); });
  for (const std::string& text : permitted_names) {
    auto rule = parse_permitted(text);
    if (!rule) return rule.status().with_context(context);
    authority->permitted_.push_back(std::move(*rule));
  }

  auto key = new_p256_key();
  if (!key) return key.status().with_context(context);
  auto tag = random_hex(8);  // tells one sandbox's CA from another's in a trust store or a certificate viewer
  if (!tag) return tag.status().with_context(context);
  auto name = name_with_common_name("oishell sandbox CA " + *tag);
  if (!name) return name.status().with_context(context);
  std::time_t now = authority->clock_();
  Asn1TimePtr not_before(X509_time_adj_ex(nullptr, 0, -static_cast<long>(kClockSkew.count()), &now));
  Asn1TimePtr not_after(X509_time_adj_ex(nullptr, static_cast<int>(validity.count() / 86400),
                                         static_cast<long>(validity.count() % 86400), &now));
  if (!not_before || !not_after) return openssl_error("X509_time_adj_ex").with_context(context);
  auto certificate = new_certificate(key->get(), name->get(), name->get(), not_before.get(), not_after.get());
  if (!certificate) return certificate.status().with_context(context);

  X509* ca = certificate->get();
  X509V3_CTX extensions;
  X509V3_set_ctx(&extensions, ca, ca, nullptr, nullptr, 0);
  // pathlen 0: this CA signs leaves, never another CA. The subject key identifier before the authority key
  // identifier, which is read from it (a self-signed certificate is its own issuer).
  OI_TRY_CTX(add_extension(ca, extensions, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"), context);
  OI_TRY_CTX(add_extension(ca, extensions, NID_key_usage, "critical,keyCertSign,cRLSign"), context);
  OI_TRY_CTX(add_extension(ca, extensions, NID_subject_key_identifier, "hash"), context);
  OI_TRY_CTX(add_extension(ca, extensions, NID_authority_key_identifier, "keyid:always"), context);
  OI_TRY_CTX(add_name_constraints(ca, authority->permitted_), context);
  if (X509_sign(ca, key->get(), EVP_sha256()) == 0) return openssl_error("X509_sign(CA)").with_context(context);

  auto pem = certificate_to_pem(ca);
  if (!pem) return pem.status().with_context(context);
  authority->key_ = std::move(*key);
  authority->certificate_ = std::move(*certificate);
  authority->certificate_pem_ = std::move(*pem);
  return authority;
}

TlsAuthority::~TlsAuthority() = default;

Result<std::shared_ptr<const TlsAuthority::Leaf>> TlsAuthority::leaf_for(const std::string& host) {
  std::optional<std::string> name = normalise_host(host);
  if (!name) return Status::error("TLS certificate for " + shown(host) + ": not a valid DNS name");
  if (IpAddress::parse(*name)) {
    return Status::error("TLS certificate for " + shown(host) + ": an IP address (terminating rules name hosts)");
  }
  bool permitted = std::any_of(permitted_.begin(), permitted_.end(),
                               [&](const HostRule& rule) { return rule.matches(*name, 0); });
  if (!permitted) {
    return Status::error("TLS certificate for " + shown(host) + ": not a name the relay terminates");
  }

  // Minting under the lock: two connections asking for one new host get one leaf, and the cost (a key and a
  // signature, well under a millisecond) is small next to the handshake that asked for it.
  std::lock_guard lock(mutex_);
  if (auto found = leaves_.find(*name); found != leaves_.end()) {
    // Still well inside its validity: the cached leaf. Near its end: a fresh one takes its place (a connection
    // holding the old one keeps it).
    std::time_t renew_by = clock_() + static_cast<std::time_t>(kLeafRenewal.count());
    if (X509_cmp_time(X509_get0_notAfter(found->second->certificate.get()), &renew_by) > 0) return found->second;
    auto renewed = mint(*name);
    if (!renewed) return renewed.status().with_context("TLS certificate for " + shown(*name));
    found->second = *renewed;
    return renewed;
  }
  auto leaf = mint(*name);
  if (!leaf) return leaf.status().with_context("TLS certificate for " + shown(*name));
  if (leaves_.size() >= kMaxCachedLeaves) {
    leaves_.erase(order_.front());
    order_.pop_front();
  }
  leaves_.emplace(*name, *leaf);
  order_.push_back(*name);
  return leaf;
}

Result<std::shared_ptr<const TlsAuthority::Leaf>> TlsAuthority::mint(const std::string& host) {
  std::time_t now = clock_();
  const ASN1_TIME* ca_not_before = X509_get0_notBefore(certificate_.get());
  const ASN1_TIME* ca_not_after = X509_get0_notAfter(certificate_.get());
  if (X509_cmp_time(ca_not_after, &now) <= 0) {
    return Status::error("the sandbox's TLS authority has expired (the sandbox has lived longer than its CA's "
                         "validity; start a new one)");
  }
  // Valid from an hour ago (clock skew) but never before the CA, for kLeafValidity but never past the CA's end:
  // inside its validity.
  Asn1TimePtr not_before(X509_time_adj_ex(nullptr, 0, -static_cast<long>(kClockSkew.count()), &now));
  Asn1TimePtr not_after(X509_time_adj_ex(nullptr, 0, static_cast<long>(kLeafValidity.count()), &now));
  if (!not_before || !not_after) return openssl_error("X509_time_adj_ex");
  if (ASN1_TIME_compare(not_before.get(), ca_not_before) < 0) {
    not_before.reset(ASN1_STRING_dup(ca_not_before));
    if (!not_before) return openssl_error("ASN1_STRING_dup");
  }
  if (ASN1_TIME_compare(not_after.get(), ca_not_after) > 0) {
    not_after.reset(ASN1_STRING_dup(ca_not_after));
    if (!not_after) return openssl_error("ASN1_STRING_dup");
  }

  // A fresh key per leaf rather than one shared by all: a P-256 key costs about what the signature does, and each
  // leaf's key then speaks for its one host. Should a later change hand leaves to another process (a helper per
  // connection), one leaked key would impersonate one name, not every host the sandbox's relay terminates.
  auto key = new_p256_key();
  if (!key) return key.status();
  X509NamePtr subject(X509_NAME_new());
  if (!subject) return openssl_error("X509_NAME_new");
  bool named_by_subject = host.size() <= kMaxCommonName;
  if (named_by_subject) {
    auto name = name_with_common_name(host);
    if (!name) return name.status();
    subject = std::move(*name);
  }
  auto certificate = new_certificate(key->get(), subject.get(), X509_get_subject_name(certificate_.get()),
                                     not_before.get(), not_after.get());
  if (!certificate) return certificate.status();

  X509* leaf = certificate->get();
  X509V3_CTX extensions;
  X509V3_set_ctx(&extensions, certificate_.get(), leaf, nullptr, nullptr, 0);
  OI_TRY(add_extension(leaf, extensions, NID_basic_constraints, "critical,CA:FALSE"));
  OI_TRY(add_extension(leaf, extensions, NID_key_usage, "critical,digitalSignature"));
  OI_TRY(add_extension(leaf, extensions, NID_ext_key_usage, "serverAuth"));
  OI_TRY(add_extension(leaf, extensions, NID_subject_key_identifier, "hash"));
  OI_TRY(add_extension(leaf, extensions, NID_authority_key_identifier, "keyid:always"));
  OI_TRY(add_subject_alt_name(leaf, host, !named_by_subject));
  if (X509_sign(leaf, key_.get(), EVP_sha256()) == 0) return openssl_error("X509_sign");

  auto minted = std::make_shared<Leaf>();
  minted->host = host;
  minted->certificate = std::move(*certificate);
  minted->key = std::move(*key);
  return std::shared_ptr<const Leaf>(std::move(minted));
}

Result<SslCtxPtr> TlsAuthority::server_context() {
  SslCtxPtr context(SSL_CTX_new(TLS_server_method()));
  if (!context) return openssl_error("SSL_CTX_new(TLS_server_method)");
  if (SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION) != 1) {
    return openssl_error("SSL_CTX_set_min_proto_version(TLS 1.2)");
  }
  // Renegotiation would let the client start a second, CPU-costly handshake at will inside the connection.
  SSL_CTX_set_options(context.get(), SSL_OP_NO_RENEGOTIATION);
  // No certificate on the context itself: every handshake gets its leaf from the server name, or fails.
  SSL_CTX_set_tlsext_servername_callback(context.get(), &TlsAuthority::on_server_name);
  SSL_CTX_set_tlsext_servername_arg(context.get(), this);
  SSL_CTX_set_alpn_select_cb(context.get(), &select_http1, nullptr);
  return context;
}

// OpenSSL calls this for every ClientHello, with or without a server_name extension, before it picks the
// certificate; what SSL_use_certificate sets here is what the handshake presents.
int TlsAuthority::on_server_name(SSL* ssl, int* alert, void* self) {
  const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (name == nullptr) {
    // Without a name there is no leaf to choose: the relay terminates named hosts only.
    push_openssl_reason("TLS ClientHello without a server name (SNI): no certificate to present");
    *alert = SSL_AD_UNRECOGNIZED_NAME;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  auto leaf = static_cast<TlsAuthority*>(self)->leaf_for(name);
  if (!leaf) {
    push_openssl_reason(leaf.status().message());
    *alert = SSL_AD_UNRECOGNIZED_NAME;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  // Both take a reference: the leaf may leave the cache while this connection still uses it.
  if (SSL_use_certificate(ssl, (*leaf)->certificate.get()) != 1 || SSL_use_PrivateKey(ssl, (*leaf)->key.get()) != 1) {
    *alert = SSL_AD_INTERNAL_ERROR;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace oishell::relay
