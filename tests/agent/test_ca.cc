#include "tests/agent/test_ca.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

namespace oishell::agent::test {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;
using Bio = std::unique_ptr<BIO, Free>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

bool add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key`, named `common_name`, valid from an hour ago for a day; signed by `issuer_key` and
// issued by `issuer` (the certificate itself when null: self-signed).
Cert make_cert(EVP_PKEY* key, const std::string& common_name, long serial, X509* issuer, EVP_PKEY* issuer_key,
               const std::vector<std::pair<int, std::string>>& extensions) {
  Cert cert(X509_new());
  if (!cert) return nullptr;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509* issuer_cert = issuer ? issuer : cert.get();
  for (const auto& [nid, value] : extensions) {
    if (!add_ext(cert.get(), issuer_cert, nid, value.c_str())) return nullptr;
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) <= 0) return nullptr;
  return cert;
}

std::string cert_pem(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return bio_text(bio.get());
}

std::string key_pem(EVP_PKEY* key) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return bio_text(bio.get());
}

Key read_key(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

Cert read_cert(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

}  // namespace

TestCa::TestCa(const std::string& common_name) : common_name_(common_name) {
  Key key(EVP_EC_gen("P-256"));
  if (!key) {
    error_ = "EVP_EC_gen failed";
    return;
  }
  Cert cert = make_cert(key.get(), common_name, 1, nullptr, key.get(),
                        {{NID_basic_constraints, "critical,CA:TRUE"},
                         {NID_key_usage, "critical,keyCertSign,cRLSign"},
                         {NID_subject_key_identifier, "hash"}});
  if (!cert) {
    error_ = "making the CA certificate failed";
    return;
  }
  char hash[16];
  std::snprintf(hash, sizeof hash, "%08lx", X509_subject_name_hash(cert.get()));
  subject_hash_ = hash;
  key_pem_ = key_pem(key.get());
  certificate_pem_ = cert_pem(cert.get());
}

TestCert TestCa::server_cert(const std::string& ip) const {
  Key ca_key = read_key(key_pem_);
  Cert ca = read_cert(certificate_pem_);
  Key key(EVP_EC_gen("P-256"));
  if (!ca_key || !ca || !key) return {};
  static long serial = 100;
  Cert cert = make_cert(key.get(), ip, ++serial, ca.get(), ca_key.get(),
                        {{NID_basic_constraints, "critical,CA:FALSE"},
                         {NID_key_usage, "critical,digitalSignature"},
                         {NID_ext_key_usage, "serverAuth"},
                         {NID_authority_key_identifier, "keyid"},
                         {NID_subject_alt_name, "IP:" + ip}});
  if (!cert) return {};
  return {cert_pem(cert.get()), key_pem(key.get())};
}

}  // namespace oishell::agent::test
