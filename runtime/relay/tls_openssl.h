#pragma once
// The seam to OpenSSL's C conventions for the relay's TLS code (tls_authority.h, tls_upstream.h): one owner per
// OpenSSL object (unique_ptr with the object's own free function), and the thread's error queue turned into a
// Status that names the failed call.
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace oishell::relay {

template <auto Free>
struct OpensslFree {
  template <typename T>
  void operator()(T* object) const {
    Free(object);
  }
};

using SslCtxPtr = std::unique_ptr<SSL_CTX, OpensslFree<SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, OpensslFree<SSL_free>>;
using X509Ptr = std::unique_ptr<X509, OpensslFree<X509_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpensslFree<EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, OpensslFree<BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpensslFree<BN_free>>;
using X509ExtensionPtr = std::unique_ptr<X509_EXTENSION, OpensslFree<X509_EXTENSION_free>>;
using X509StorePtr = std::unique_ptr<X509_STORE, OpensslFree<X509_STORE_free>>;
using X509StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, OpensslFree<X509_STORE_CTX_free>>;
using X509NamePtr = std::unique_ptr<X509_NAME, OpensslFree<X509_NAME_free>>;
using Asn1TimePtr = std::unique_ptr<ASN1_TIME, OpensslFree<ASN1_TIME_free>>;
using GeneralNamePtr = std::unique_ptr<GENERAL_NAME, OpensslFree<GENERAL_NAME_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, OpensslFree<GENERAL_NAMES_free>>;
using GeneralSubtreePtr = std::unique_ptr<GENERAL_SUBTREE, OpensslFree<GENERAL_SUBTREE_free>>;
using NameConstraintsPtr = std::unique_ptr<NAME_CONSTRAINTS, OpensslFree<NAME_CONSTRAINTS_free>>;

// Drains this thread's OpenSSL error queue into one failure: "SSL_CTX_load_verify_locations(/x.pem):
// error:80000002:system library::No such file or directory (calling fopen(/x.pem, r)); ...", oldest first. A
// system-library error (a failed fopen) also carries its errno. An empty queue still fails, saying so: the caller
// saw the call fail.
Status openssl_error(std::string_view call);

// Puts `reason` on this thread's error queue, for a failure OpenSSL reports without saying why: a callback that
// refuses a handshake makes SSL_do_handshake fail with only "callback failed" after it. openssl_error() shows
// these entries as their text alone.
void push_openssl_reason(std::string_view reason);

// `bytes` random bytes from OpenSSL's generator, as lower-case hex (twice as many characters).
Result<std::string> random_hex(size_t bytes);

// The certificate as PEM text.
Result<std::string> certificate_to_pem(X509* certificate);

}  // namespace oishell::relay
