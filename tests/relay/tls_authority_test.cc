// Unit tests for the sandbox's TLS authority (runtime/relay/tls_authority.h): certificates read back field by
// field and judged by OpenSSL's own chain verifier, and real handshakes between server_context() and a client that
// trusts the authority alone, over memory BIO pairs (tls_handshake.h). No sockets, no network.
#include "runtime/relay/tls_authority.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "tests/relay/tls_handshake.h"

namespace oishell::relay {
namespace {

using namespace std::chrono_literals;
using testing::alpn_wire;
using testing::authority;
using testing::handshake;
using testing::Handshake;
using testing::kDone;
using testing::kFailed;
using testing::kNames;
using testing::parse_pem;

std::shared_ptr<const TlsAuthority::Leaf> leaf(TlsAuthority& ca, const std::string& host) {
  auto minted = ca.leaf_for(host);
  if (!minted) {
    ADD_FAILURE() << host << ": " << minted.status().message();
    return nullptr;
  }
  return *minted;
}

// OpenSSL's verdict on `leaf` as a TLS server certificate for `host`, trusting `ca` alone, with the strict
// RFC 5280 checks: X509_V_OK or the verification error.
int verify(X509* ca, X509* leaf, const std::string& host, std::time_t at = 0) {
  X509StorePtr store(X509_STORE_new());
  X509StoreCtxPtr context(X509_STORE_CTX_new());
  if (!store || !context || X509_STORE_add_cert(store.get(), ca) != 1 ||
      X509_STORE_CTX_init(context.get(), store.get(), leaf, nullptr) != 1) {
    ADD_FAILURE() << openssl_error("setting up X509_verify_cert").message();
    return -1;
  }
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(context.get());
  X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_X509_STRICT);
  X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
  X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
  if (at != 0) X509_VERIFY_PARAM_set_time(param, at);  // as a client whose clock says `at` would
  if (X509_verify_cert(context.get()) == 1) return X509_V_OK;
  int error = X509_STORE_CTX_get_error(context.get());
  return error == X509_V_OK ? -1 : error;
}

std::string common_name(X509* certificate) {
  char text[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName, text, sizeof text);
  return text;
}

std::vector<std::string> dns_names(X509* certificate) {
  std::vector<std::string> names;
  auto* general = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; i < sk_GENERAL_NAME_num(general); ++i) {
    int type = 0;
    auto* value = static_cast<ASN1_STRING*>(GENERAL_NAME_get0_value(sk_GENERAL_NAME_value(general, i), &type));
    names.push_back(type == GEN_DNS ? std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                                                  ASN1_STRING_length(value))
                                    : "(not a dNSName)");
  }
  GENERAL_NAMES_free(general);
  return names;
}

// The extension's critical flag, or -1 when the certificate lacks it.
int critical(X509* certificate, int nid) {
  int at = X509_get_ext_by_NID(certificate, nid, -1);
  return at < 0 ? -1 : X509_EXTENSION_get_critical(X509_get_ext(certificate, at));
}

// The key's elliptic curve ("prime256v1" is P-256), or "" when it is not an EC key.
std::string curve(const EVP_PKEY* key) {
  char name[64] = {};
  size_t length = 0;
  if (!EVP_PKEY_is_a(key, "EC") || EVP_PKEY_get_group_name(key, name, sizeof name, &length) != 1) return "";
  return std::string(name, length);
}

// Seconds from now to `time` (negative: in the past).
long long seconds_from_now(const ASN1_TIME* time) {
  int days = 0, seconds = 0;
  EXPECT_EQ(1, ASN1_TIME_diff(&days, &seconds, nullptr, time));
  return days * 86400LL + seconds;
}

// A TLS client as the sandbox's would be set up: trusts the authority's certificate alone, checks the host name.
SslCtxPtr sandbox_client(const std::string& ca_pem) {
  SslCtxPtr context(SSL_CTX_new(TLS_client_method()));
  X509Ptr ca = parse_pem(ca_pem);
  EXPECT_TRUE(context && ca);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  EXPECT_EQ(1, X509_STORE_add_cert(SSL_CTX_get_cert_store(context.get()), ca.get()));
  return context;
}

// The client's setup: SNI and the name to verify (none when empty), the ALPN offer (none when empty).
std::function<void(SSL*)> client_setup(const std::string& sni, const std::vector<std::string>& alpn) {
  return [sni, alpn](SSL* ssl) {
    if (!sni.empty()) {
      EXPECT_EQ(1, SSL_set_tlsext_host_name(ssl, sni.c_str()));
      EXPECT_EQ(1, SSL_set1_host(ssl, sni.c_str()));
    }
    if (!alpn.empty()) {
      std::string wire = alpn_wire(alpn);
      EXPECT_EQ(0, SSL_set_alpn_protos(ssl, reinterpret_cast<const unsigned char*>(wire.data()), wire.size()));
    }
  };
}

// --- the CA certificate -------------------------------------------------------------------------------------------

TEST(TlsAuthority, CaCertificateIsAPathLengthZeroCaValidForItsValidity) {
  auto ca = authority(kNames, 24h);
  ASSERT_NE(nullptr, ca);
  X509Ptr certificate = parse_pem(ca->certificate_pem());
  ASSERT_NE(nullptr, certificate);

  EXPECT_EQ(1, X509_check_ca(certificate.get()));
  EXPECT_EQ(0, X509_get_pathlen(certificate.get()));
  EXPECT_EQ(1, critical(certificate.get(), NID_basic_constraints));
  EXPECT_EQ(uint32_t{KU_KEY_CERT_SIGN | KU_CRL_SIGN}, X509_get_key_usage(certificate.get()));
  EXPECT_EQ(1, critical(certificate.get(), NID_key_usage));
  EXPECT_NE(nullptr, X509_get0_subject_key_id(certificate.get()));
  EXPECT_EQ(X509_V_OK, X509_check_issued(certificate.get(), certificate.get()));  // self-signed
  EXPECT_EQ(0, X509_NAME_cmp(X509_get_subject_name(certificate.get()), X509_get_issuer_name(certificate.get())));
  EXPECT_TRUE(common_name(certificate.get()).starts_with("oishell sandbox CA ")) << common_name(certificate.get());
  EXPECT_EQ("prime256v1", curve(X509_get0_pubkey(certificate.get())));
  BignumPtr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate.get()), nullptr));
  EXPECT_EQ(128, BN_num_bits(serial.get()));

  // Valid since an hour ago (clock skew), until 24 h from now; a minute of slack for a slow test machine.
  long long not_before = seconds_from_now(X509_get0_notBefore(certificate.get()));
  long long not_after = seconds_from_now(X509_get0_notAfter(certificate.get()));
  EXPECT_LT(not_before, 0);
  EXPECT_NEAR(-3600, not_before, 60);
  EXPECT_NEAR(24 * 3600, not_after, 60);

  // The validity is the caller's; and each authority is its own (name, serial, key).
  auto short_lived = authority(kNames, 2h);
  ASSERT_NE(nullptr, short_lived);
  X509Ptr other = parse_pem(short_lived->certificate_pem());
  EXPECT_NEAR(2 * 3600, seconds_from_now(X509_get0_notAfter(other.get())), 60);
  EXPECT_NE(common_name(certificate.get()), common_name(other.get()));
  EXPECT_NE(0, ASN1_INTEGER_cmp(X509_get0_serialNumber(certificate.get()), X509_get0_serialNumber(other.get())));
  EXPECT_NE(1, EVP_PKEY_eq(X509_get0_pubkey(certificate.get()), X509_get0_pubkey(other.get())));
}

TEST(TlsAuthority, CaNameConstraintsAreCriticalAndPermitOnlyTheRuleHosts) {
  auto ca = authority({"api.example.test", "*.example.org", "API.example.test."});
  ASSERT_NE(nullptr, ca);
  X509Ptr certificate = parse_pem(ca->certificate_pem());
  int is_critical = -1;
  auto* constraints = static_cast<NAME_CONSTRAINTS*>(
      X509_get_ext_d2i(certificate.get(), NID_name_constraints, &is_critical, nullptr));
  ASSERT_NE(nullptr, constraints);
  EXPECT_EQ(1, is_critical);
  EXPECT_EQ(nullptr, constraints->excludedSubtrees);
  std::vector<std::string> permitted;
  for (int i = 0; i < sk_GENERAL_SUBTREE_num(constraints->permittedSubtrees); ++i) {
    GENERAL_NAME* base = sk_GENERAL_SUBTREE_value(constraints->permittedSubtrees, i)->base;
    ASSERT_EQ(GEN_DNS, base->type);
    permitted.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(base->d.dNSName)),
                           ASN1_STRING_length(base->d.dNSName));
  }
  NAME_CONSTRAINTS_free(constraints);
  // The suffix rule's subtree is its domain; the duplicate exact rule (another spelling) appears once.
  EXPECT_EQ((std::vector<std::string>{"api.example.test", "example.org"}), permitted);
}

TEST(TlsAuthority, CreateRefusesWhatIsNotAHostToTerminate) {
  // Without the refusal each would be a CA whose constraints name no host, or a range, or a port.
  EXPECT_FALSE(TlsAuthority::create({}, 24h).is_ok());
  for (const char* name : {"10.0.0.0/8", "192.0.2.1", "[::1]", "api.example.test:443", "*.test", "*", "bad name",
                           "a..example.test", ""}) {
    auto made = TlsAuthority::create({"api.example.test", name}, 24h);
    EXPECT_FALSE(made.is_ok()) << name;
  }
  EXPECT_FALSE(TlsAuthority::create(kNames, 0s).is_ok());
  EXPECT_FALSE(TlsAuthority::create(kNames, -1s).is_ok());
  EXPECT_FALSE(TlsAuthority::create(kNames, 24h * 3660).is_ok());
  // The neighbours: one exact name, one second of validity.
  EXPECT_TRUE(TlsAuthority::create({"api.example.test"}, 1s).is_ok());
}

// --- leaves -------------------------------------------------------------------------------------------------------

TEST(TlsAuthority, LeafForAPermittedExactNameVerifiesAgainstTheCa) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  X509Ptr ca_certificate = parse_pem(ca->certificate_pem());
  auto api = leaf(*ca, "api.example.test");
  ASSERT_NE(nullptr, api);
  EXPECT_EQ(X509_V_OK, verify(ca_certificate.get(), api->certificate.get(), "api.example.test"));
  // The same leaf for another name: the host check refuses it.
  EXPECT_EQ(X509_V_ERR_HOSTNAME_MISMATCH, verify(ca_certificate.get(), api->certificate.get(), "www.example.org"));
  // Trusting another authority instead: no chain.
  auto stranger = authority();
  ASSERT_NE(nullptr, stranger);
  X509Ptr stranger_certificate = parse_pem(stranger->certificate_pem());
  EXPECT_EQ(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
            verify(stranger_certificate.get(), api->certificate.get(), "api.example.test"));
}

TEST(TlsAuthority, LeafForASubdomainOfASuffixRuleVerifies) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  X509Ptr ca_certificate = parse_pem(ca->certificate_pem());
  for (const char* host : {"www.example.org", "a.b.example.org"}) {
    auto minted = leaf(*ca, host);
    ASSERT_NE(nullptr, minted);
    EXPECT_EQ(X509_V_OK, verify(ca_certificate.get(), minted->certificate.get(), host)) << host;
  }
  // `*.example.org` covers the names below example.org, not example.org itself (as the relay's rules match).
  EXPECT_FALSE(ca->leaf_for("example.org").is_ok());
}

TEST(TlsAuthority, LeafFieldsAreThoseOfATlsServerCertificate) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  X509Ptr ca_certificate = parse_pem(ca->certificate_pem());
  auto api = leaf(*ca, "api.example.test");
  ASSERT_NE(nullptr, api);
  X509* certificate = api->certificate.get();
  EXPECT_EQ("api.example.test", api->host);
  EXPECT_EQ("api.example.test", common_name(certificate));
  EXPECT_EQ(std::vector<std::string>{"api.example.test"}, dns_names(certificate));
  EXPECT_EQ(0, critical(certificate, NID_subject_alt_name));  // the subject names it too
  EXPECT_EQ(0, X509_check_ca(certificate));
  EXPECT_EQ(1, critical(certificate, NID_basic_constraints));  // present: CA:FALSE said, not implied
  EXPECT_EQ(uint32_t{KU_DIGITAL_SIGNATURE}, X509_get_key_usage(certificate));
  EXPECT_EQ(uint32_t{XKU_SSL_SERVER}, X509_get_extended_key_usage(certificate));
  ASSERT_NE(nullptr, X509_get0_authority_key_id(certificate));
  EXPECT_EQ(0, ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(certificate),
                                     X509_get0_subject_key_id(ca_certificate.get())));
  EXPECT_EQ(X509_V_OK, X509_check_issued(ca_certificate.get(), certificate));
  // Inside the CA's validity.
  EXPECT_GE(ASN1_TIME_compare(X509_get0_notBefore(certificate), X509_get0_notBefore(ca_certificate.get())), 0);
  EXPECT_LE(ASN1_TIME_compare(X509_get0_notAfter(certificate), X509_get0_notAfter(ca_certificate.get())), 0);
  EXPECT_LT(seconds_from_now(X509_get0_notBefore(certificate)), 0);
  // Its own P-256 key: not the CA's, not another leaf's.
  EXPECT_EQ(1, EVP_PKEY_eq(api->key.get(), X509_get0_pubkey(certificate)));
  EXPECT_EQ("prime256v1", curve(api->key.get()));
  EXPECT_NE(1, EVP_PKEY_eq(api->key.get(), X509_get0_pubkey(ca_certificate.get())));
  auto www = leaf(*ca, "www.example.org");
  ASSERT_NE(nullptr, www);
  EXPECT_NE(1, EVP_PKEY_eq(api->key.get(), www->key.get()));
}

// --- validity over a long session ----------------------------------------------------------------------------------

// A clock the test moves.
struct TestClock {
  std::time_t now = std::time(nullptr);
  TlsAuthority::Clock clock() {
    return [this] { return now; };
  }
};

TEST(TlsAuthority, LeafIsValidForADayEvenUnderAMonthLongCa) {
  auto made = TlsAuthority::create(kNames, 24h * 30);
  ASSERT_TRUE(made.is_ok()) << made.status().message();
  auto api = leaf(**made, "api.example.test");
  ASSERT_NE(nullptr, api);
  EXPECT_NEAR(24 * 3600, seconds_from_now(X509_get0_notAfter(api->certificate.get())), 60);
  X509Ptr ca_certificate = parse_pem((*made)->certificate_pem());
  EXPECT_NEAR(30 * 24 * 3600, seconds_from_now(X509_get0_notAfter(ca_certificate.get())), 60);
  // The neighbour: under a CA shorter than a day, the leaf ends with the CA.
  auto brief = authority(kNames, 2h);
  ASSERT_NE(nullptr, brief);
  auto short_leaf = leaf(*brief, "api.example.test");
  ASSERT_NE(nullptr, short_leaf);
  EXPECT_NEAR(2 * 3600, seconds_from_now(X509_get0_notAfter(short_leaf->certificate.get())), 60);
}

TEST(TlsAuthority, ACachedLeafNearItsEndIsMintedAgainAndVerifiesThen) {
  TestClock time;
  const std::time_t start = time.now;
  auto made = TlsAuthority::create(kNames, 24h * 30, time.clock());
  ASSERT_TRUE(made.is_ok()) << made.status().message();
  TlsAuthority& ca = **made;
  X509Ptr ca_certificate = parse_pem(ca.certificate_pem());
  auto first = leaf(ca, "api.example.test");
  ASSERT_NE(nullptr, first);
  // 17 h on, 7 h are left (more than kLeafRenewal's 6): the cached leaf.
  time.now = start + 17 * 3600;
  EXPECT_EQ(first, leaf(ca, "api.example.test"));
  // 19 h on, 5 h are left: a new leaf, valid from then for a day, which a client verifies then and for the day after.
  time.now = start + 19 * 3600;
  auto renewed = leaf(ca, "api.example.test");
  ASSERT_NE(nullptr, renewed);
  EXPECT_NE(first, renewed);
  EXPECT_EQ(renewed, leaf(ca, "api.example.test"));
  EXPECT_EQ(X509_V_OK, verify(ca_certificate.get(), renewed->certificate.get(), "api.example.test", time.now));
  EXPECT_EQ(X509_V_OK,
            verify(ca_certificate.get(), renewed->certificate.get(), "api.example.test", start + 42 * 3600));
  // The old leaf, 25 h after it was minted, has expired: what renewal spares a long session.
  EXPECT_EQ(X509_V_ERR_CERT_HAS_EXPIRED,
            verify(ca_certificate.get(), first->certificate.get(), "api.example.test", start + 25 * 3600));
}

TEST(TlsAuthority, PastTheCasEndNoLeafIsMinted) {
  TestClock time;
  const std::time_t start = time.now;
  auto made = TlsAuthority::create(kNames, 48h, time.clock());
  ASSERT_TRUE(made.is_ok()) << made.status().message();
  TlsAuthority& ca = **made;
  time.now = start + 47 * 3600;  // an hour before the end: a leaf, ending with the CA
  auto last = ca.leaf_for("www.example.org");
  ASSERT_TRUE(last.is_ok()) << last.status().message();
  X509Ptr ca_certificate = parse_pem(ca.certificate_pem());
  EXPECT_EQ(0, ASN1_TIME_compare(X509_get0_notAfter((*last)->certificate.get()),
                                 X509_get0_notAfter(ca_certificate.get())));
  time.now = start + 49 * 3600;
  auto refused = ca.leaf_for("api.example.test");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(std::string::npos, refused.status().message().find("has expired")) << refused.status().message();
}

TEST(TlsAuthority, HostLongerThanACommonNameIsNamedBySubjectAltNameAlone) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  X509Ptr ca_certificate = parse_pem(ca->certificate_pem());
  std::string host = std::string(60, 'a') + ".www.example.org";  // 76 characters; a commonName holds 64
  auto minted = leaf(*ca, host);
  ASSERT_NE(nullptr, minted);
  EXPECT_EQ(0, X509_NAME_entry_count(X509_get_subject_name(minted->certificate.get())));
  EXPECT_EQ(std::vector<std::string>{host}, dns_names(minted->certificate.get()));
  EXPECT_EQ(1, critical(minted->certificate.get(), NID_subject_alt_name));  // RFC 5280: empty subject
  EXPECT_EQ(X509_V_OK, verify(ca_certificate.get(), minted->certificate.get(), host));
}

TEST(TlsAuthority, LeafForANameOutsideThePermittedListIsRefused) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  // Without the refusal the relay would present a trusted certificate for a host the policy does not terminate.
  // (Signing one with the CA key from outside is not possible: the key has no accessor.)
  for (const char* host : {"evil.test", "example.test", "x.api.example.test", "example.org.evil.test",
                           "wwwexample.org"}) {
    auto refused = ca->leaf_for(host);
    ASSERT_FALSE(refused.is_ok()) << host;
    EXPECT_NE(std::string::npos, refused.status().message().find("not a name the relay terminates"))
        << refused.status().message();
  }
  // The neighbours, in any spelling of the name.
  EXPECT_TRUE(ca->leaf_for("api.example.test").is_ok());
  EXPECT_TRUE(ca->leaf_for("API.Example.Test.").is_ok());
}

TEST(TlsAuthority, WhatIsNotADnsNameIsRefused) {
  auto ca = authority({"api.example.test", "*.example.org", "*.2.0.192.in-addr.arpa"});
  ASSERT_NE(nullptr, ca);
  for (const char* host : {"", ".", "a..example.org", "bad host.example.org", "*.example.org", "x\x1b.example.org",
                           "www.example.org:443"}) {
    auto refused = ca->leaf_for(host);
    ASSERT_FALSE(refused.is_ok()) << host;
    EXPECT_NE(std::string::npos, refused.status().message().find("not a valid DNS name"))
        << refused.status().message();
  }
  EXPECT_EQ(std::string::npos, ca->leaf_for("x\x1b.example.org").status().message().find('\x1b'));  // escaped
  for (const char* host : {"192.0.2.1", "[::1]", "::1", "[2001:db8::1]"}) {
    auto refused = ca->leaf_for(host);
    ASSERT_FALSE(refused.is_ok()) << host;
    EXPECT_NE(std::string::npos, refused.status().message().find("an IP address")) << refused.status().message();
  }
  EXPECT_TRUE(ca->leaf_for("1.2.0.192.in-addr.arpa").is_ok());  // digits in a name are fine
}

// --- the leaf cache -----------------------------------------------------------------------------------------------

TEST(TlsAuthority, LeafCacheReturnsTheSameLeafForTheSameHost) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  auto first = leaf(*ca, "www.example.org");
  ASSERT_NE(nullptr, first);
  EXPECT_EQ(first, leaf(*ca, "www.example.org"));
  EXPECT_EQ(first, leaf(*ca, "WWW.example.org."));  // cached by the normalised name
  EXPECT_NE(first, leaf(*ca, "ftp.example.org"));
}

TEST(TlsAuthority, TwoHundredHostsMintInSeconds) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  X509Ptr ca_certificate = parse_pem(ca->certificate_pem());
  auto start = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<const TlsAuthority::Leaf>> leaves;
  for (int i = 0; i < 200; ++i) {
    leaves.push_back(leaf(*ca, "host" + std::to_string(i) + ".example.org"));
    ASSERT_NE(nullptr, leaves.back());
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, 10s);  // a sanity bound; each mint is a key and a signature, well under a millisecond
  std::set<const TlsAuthority::Leaf*> distinct;
  for (int i = 0; i < 200; ++i) {
    distinct.insert(leaves[i].get());
    EXPECT_EQ(leaves[i], leaf(*ca, "host" + std::to_string(i) + ".example.org"));  // all cached
  }
  EXPECT_EQ(200u, distinct.size());
  EXPECT_EQ(X509_V_OK, verify(ca_certificate.get(), leaves[199]->certificate.get(), "host199.example.org"));
}

TEST(TlsAuthority, LeafCacheIsBoundedAndDropsTheOldestLeaf) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  X509Ptr ca_certificate = parse_pem(ca->certificate_pem());
  auto host = [](size_t i) { return "h" + std::to_string(i) + ".example.org"; };
  auto oldest = leaf(*ca, host(0));
  ASSERT_NE(nullptr, oldest);
  for (size_t i = 1; i < TlsAuthority::kMaxCachedLeaves; ++i) ASSERT_TRUE(ca->leaf_for(host(i)).is_ok());
  auto second = leaf(*ca, host(1));
  EXPECT_EQ(oldest, leaf(*ca, host(0)));  // the cache is full, nothing dropped yet
  ASSERT_TRUE(ca->leaf_for(host(TlsAuthority::kMaxCachedLeaves)).is_ok());  // one more: h0 goes
  auto again = leaf(*ca, host(0));
  ASSERT_NE(nullptr, again);
  EXPECT_NE(oldest, again);  // minted anew (and h1 dropped for it)
  EXPECT_EQ(leaf(*ca, host(TlsAuthority::kMaxCachedLeaves)), leaf(*ca, host(TlsAuthority::kMaxCachedLeaves)));
  // A dropped leaf still held by a connection stays whole and valid.
  EXPECT_EQ(X509_V_OK, verify(ca_certificate.get(), oldest->certificate.get(), host(0)));
  EXPECT_EQ(X509_V_OK, verify(ca_certificate.get(), second->certificate.get(), host(1)));
}

TEST(TlsAuthority, ConcurrentRequestsForANewHostGetOneLeaf) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  std::vector<std::shared_ptr<const TlsAuthority::Leaf>> got(8);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      auto minted = ca->leaf_for("race.example.org");
      if (minted) got[i] = *minted;
    });
  }
  go = true;
  for (std::thread& thread : threads) thread.join();
  ASSERT_NE(nullptr, got[0]);
  for (const auto& each : got) EXPECT_EQ(got[0], each);
}

// --- handshakes with server_context() -----------------------------------------------------------------------------

TEST(TlsAuthorityHandshake, PermittedNameNegotiatesHttp11AndVerifies) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  auto server = ca->server_context();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  EXPECT_EQ(TLS1_2_VERSION, SSL_CTX_get_min_proto_version(server->get()));
  SslCtxPtr client = sandbox_client(ca->certificate_pem());

  Handshake h = handshake(server->get(), client.get(), client_setup("api.example.test", {"h2", "http/1.1"}));
  EXPECT_EQ(kDone, h.client) << h.client_error;
  EXPECT_EQ(kDone, h.server) << h.server_error;
  EXPECT_EQ(X509_V_OK, h.verify_result);
  EXPECT_EQ("http/1.1", h.alpn);
  auto api = leaf(*ca, "api.example.test");
  ASSERT_TRUE(h.peer && api);
  EXPECT_EQ(0, X509_cmp(h.peer.get(), api->certificate.get()));  // the cached leaf, presented

  // A suffix rule's host, and a client without ALPN (it speaks HTTP/1.1 and is served).
  h = handshake(server->get(), client.get(), client_setup("www.example.org", {}));
  EXPECT_EQ(kDone, h.client) << h.client_error;
  EXPECT_EQ(kDone, h.server) << h.server_error;
  EXPECT_EQ(X509_V_OK, h.verify_result);
  EXPECT_EQ("", h.alpn);
}

TEST(TlsAuthorityHandshake, Tls12ClientIsServed) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  auto server = ca->server_context();
  ASSERT_TRUE(server.is_ok());
  SslCtxPtr client = sandbox_client(ca->certificate_pem());
  SSL_CTX_set_max_proto_version(client.get(), TLS1_2_VERSION);
  Handshake h = handshake(server->get(), client.get(), client_setup("api.example.test", {"http/1.1"}));
  EXPECT_EQ(kDone, h.client) << h.client_error;
  EXPECT_EQ(kDone, h.server) << h.server_error;
  EXPECT_EQ(X509_V_OK, h.verify_result);
  EXPECT_EQ("http/1.1", h.alpn);
}

TEST(TlsAuthorityHandshake, Http10OnlyClientIsServedAndHttp11Preferred) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  auto server = ca->server_context();
  ASSERT_TRUE(server.is_ok());
  SslCtxPtr client = sandbox_client(ca->certificate_pem());
  // curl --http1.0 offers only "http/1.0"; the relay reads HTTP/1.0 requests, so it is served.
  Handshake h = handshake(server->get(), client.get(), client_setup("api.example.test", {"http/1.0"}));
  EXPECT_EQ(kDone, h.client) << h.client_error;
  EXPECT_EQ(kDone, h.server) << h.server_error;
  EXPECT_EQ("http/1.0", h.alpn);
  // Offered both (in either order): http/1.1.
  h = handshake(server->get(), client.get(), client_setup("api.example.test", {"http/1.0", "http/1.1"}));
  EXPECT_EQ(kDone, h.server) << h.server_error;
  EXPECT_EQ("http/1.1", h.alpn);
}

TEST(TlsAuthorityHandshake, H2OnlyClientFailsWithNoApplicationProtocol) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  auto server = ca->server_context();
  ASSERT_TRUE(server.is_ok());
  SslCtxPtr client = sandbox_client(ca->certificate_pem());
  // Without the alert the relay would accept the connection and its HTTP/1.1 parser would meet h2 frames.
  Handshake h = handshake(server->get(), client.get(), client_setup("api.example.test", {"h2"}));
  EXPECT_EQ(kFailed, h.client);
  EXPECT_EQ(kFailed, h.server);
  EXPECT_EQ(SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL, h.client_reason) << h.client_error;
  EXPECT_NE(std::string::npos, h.server_error.find("offers no http/1.1 nor http/1.0")) << h.server_error;
}

TEST(TlsAuthorityHandshake, NameTheAuthorityRefusesFailsWithUnrecognizedName) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  auto server = ca->server_context();
  ASSERT_TRUE(server.is_ok());
  SslCtxPtr client = sandbox_client(ca->certificate_pem());
  Handshake h = handshake(server->get(), client.get(), client_setup("evil.test", {"http/1.1"}));
  EXPECT_EQ(kFailed, h.client);
  EXPECT_EQ(kFailed, h.server);
  EXPECT_EQ(SSL_R_TLSV1_UNRECOGNIZED_NAME, h.client_reason) << h.client_error;
  // The server's failure says why, not only "callback failed".
  EXPECT_NE(std::string::npos, h.server_error.find("`evil.test`: not a name the relay terminates")) << h.server_error;
  EXPECT_EQ(nullptr, h.peer);  // no certificate was shown
}

TEST(TlsAuthorityHandshake, NoServerNameFailsWithUnrecognizedName) {
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  auto server = ca->server_context();
  ASSERT_TRUE(server.is_ok());
  SslCtxPtr client = sandbox_client(ca->certificate_pem());
  Handshake h = handshake(server->get(), client.get(), client_setup("", {"http/1.1"}));
  EXPECT_EQ(kFailed, h.client);
  EXPECT_EQ(kFailed, h.server);
  EXPECT_EQ(SSL_R_TLSV1_UNRECOGNIZED_NAME, h.client_reason) << h.client_error;
  EXPECT_NE(std::string::npos, h.server_error.find("without a server name")) << h.server_error;
}

// --- errors -------------------------------------------------------------------------------------------------------

TEST(TlsAuthorityErrors, OpensslErrorQueueBecomesTheMessage) {
  ERR_clear_error();
  push_openssl_reason("the reason given");
  std::string junk = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  EXPECT_EQ(nullptr, parse_pem(junk));
  Status status = openssl_error("PEM_read_bio_X509");
  EXPECT_TRUE(status.message().starts_with("PEM_read_bio_X509: the reason given; error:")) << status.message();
  EXPECT_EQ(0u, ERR_peek_error());  // drained
  EXPECT_EQ("X509_new: failed, with no reason in OpenSSL's error queue", openssl_error("X509_new").message());
}

}  // namespace
}  // namespace oishell::relay
