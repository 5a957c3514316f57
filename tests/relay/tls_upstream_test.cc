// Unit tests for the relay's TLS client towards the real upstream (runtime/relay/tls_upstream.h): handshakes with
// servers whose leaves a TlsAuthority minted (standing in for a private service and its CA), over memory BIO
// pairs. The suite names share the TlsAuthority prefix so that `ctest -R TlsAuthority` runs every test of the TLS
// termination.
#include "runtime/relay/tls_upstream.h"

#include <openssl/ssl.h>
#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "runtime/relay/tls_authority.h"
#include "tests/relay/tls_handshake.h"

namespace oishell::relay {
namespace {

using testing::TempDir;
using testing::alpn_wire;
using testing::authority;
using testing::handshake;
using testing::Handshake;
using testing::kDone;
using testing::kFailed;

// The upstream side of the relay as it will be used: SNI and the host check from set_upstream_host.
std::function<void(SSL*)> upstream_setup(const std::string& host) {
  return [host](SSL* ssl) {
    Status set = set_upstream_host(ssl, host);
    EXPECT_TRUE(set.is_ok()) << set.message();
  };
}

TEST(TlsAuthorityUpstream, TrustsOnlyTheCaFileGiven) {
  auto upstream_ca = authority();  // plays the private service's CA
  auto other_ca = authority();     // a CA the relay was not told to trust
  ASSERT_TRUE(upstream_ca && other_ca);
  TempDir dir;
  std::string ca_file = dir.write("upstream-ca.pem", upstream_ca->certificate_pem());
  auto client = upstream_client_context(ca_file);
  ASSERT_TRUE(client.is_ok()) << client.status().message();
  EXPECT_EQ(SSL_VERIFY_PEER, SSL_CTX_get_verify_mode(client->get()));
  EXPECT_EQ(TLS1_2_VERSION, SSL_CTX_get_min_proto_version(client->get()));
  // The file's one certificate is the whole store (no system CAs beside it).
  EXPECT_EQ(1, sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(client->get()))));

  auto trusted_server = upstream_ca->server_context();
  Handshake h = handshake(trusted_server->get(), client->get(), upstream_setup("api.example.test"));
  EXPECT_EQ(kDone, h.client) << h.client_error;
  EXPECT_EQ(kDone, h.server) << h.server_error;
  EXPECT_EQ(X509_V_OK, h.verify_result);
  EXPECT_EQ("http/1.1", h.alpn);

  // The same name, a leaf from another authority: refused by the client.
  auto other_server = other_ca->server_context();
  h = handshake(other_server->get(), client->get(), upstream_setup("api.example.test"));
  EXPECT_EQ(kFailed, h.client);
  EXPECT_EQ(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, h.verify_result);
  EXPECT_EQ(SSL_R_CERTIFICATE_VERIFY_FAILED, h.client_reason) << h.client_error;
}

TEST(TlsAuthorityUpstream, CertificateForAnotherNameIsRefused) {
  auto upstream_ca = authority({"api.example.test", "other.example.test"});
  ASSERT_NE(nullptr, upstream_ca);
  TempDir dir;
  auto client = upstream_client_context(dir.write("ca.pem", upstream_ca->certificate_pem()));
  ASSERT_TRUE(client.is_ok()) << client.status().message();
  auto server = upstream_ca->server_context();
  ASSERT_TRUE(server.is_ok());
  // The relay expects other.example.test; the server presents api.example.test's (trusted) leaf, as a server
  // answering for the wrong name would. The SNI is overridden to make the server pick that leaf.
  Handshake h = handshake(server->get(), client->get(), [](SSL* ssl) {
    EXPECT_TRUE(set_upstream_host(ssl, "other.example.test").is_ok());
    SSL_set_tlsext_host_name(ssl, "api.example.test");
  });
  EXPECT_EQ(kFailed, h.client);
  EXPECT_EQ(X509_V_ERR_HOSTNAME_MISMATCH, h.verify_result);
  // The neighbour: the name the leaf carries.
  h = handshake(server->get(), client->get(), upstream_setup("other.example.test"));
  EXPECT_EQ(kDone, h.client) << h.client_error;
  EXPECT_EQ(X509_V_OK, h.verify_result);
}

// One connection from `client_context` to `server_context` for `host`, as the terminator makes it (the kept
// session offered, then the handshake), the client reading on after it as the terminator does, so that it takes
// the TLS 1.3 session tickets the server sends then, and ending with close_notify. Returns whether the session was
// resumed; `done`: whether both ends finished their handshake.
bool connect_once(SSL_CTX* server_context, SSL_CTX* client_context, const std::string& host, bool& done) {
  SslPtr server(SSL_new(server_context));
  SslPtr client(SSL_new(client_context));
  BIO* server_end = nullptr;
  BIO* client_end = nullptr;
  if (!server || !client || BIO_new_bio_pair(&server_end, 0, &client_end, 0) != 1) return false;
  SSL_set_bio(server.get(), server_end, server_end);
  SSL_set_bio(client.get(), client_end, client_end);
  SSL_set_accept_state(server.get());
  SSL_set_connect_state(client.get());
  EXPECT_TRUE(set_upstream_host(client.get(), host).is_ok());
  offer_upstream_session(client.get(), host);
  bool client_done = false, server_done = false;
  for (int round = 0; round < 50 && !(client_done && server_done); ++round) {
    if (!client_done) client_done = SSL_do_handshake(client.get()) == 1;
    if (!server_done) server_done = SSL_do_handshake(server.get()) == 1;
  }
  char byte;
  EXPECT_LE(SSL_read(client.get(), &byte, 1), 0);  // nothing but the tickets to read
  done = client_done && server_done;
  const bool resumed = SSL_session_reused(client.get()) == 1;
  // The end the terminator makes (close_notify): OpenSSL does not resume a session whose connection ended without.
  if (done) SSL_shutdown(client.get());
  return resumed;
}

TEST(TlsAuthorityUpstream, ASecondConnectionToAHostResumesAndNoOtherHostOrContextDoes) {
  auto upstream_ca = authority({"api.example.test", "other.example.test"});
  ASSERT_NE(nullptr, upstream_ca);
  TempDir dir;
  std::string ca_file = dir.write("ca.pem", upstream_ca->certificate_pem());
  auto client = upstream_client_context(ca_file);
  ASSERT_TRUE(client.is_ok()) << client.status().message();
  auto server = upstream_ca->server_context();  // sends session tickets, as OpenSSL servers do by default
  ASSERT_TRUE(server.is_ok());
  bool done = false;
  EXPECT_FALSE(connect_once(server->get(), client->get(), "api.example.test", done));  // the first: full
  EXPECT_TRUE(done);
  EXPECT_TRUE(connect_once(server->get(), client->get(), "api.example.test", done));  // then resumed
  EXPECT_TRUE(done);
  // Another host of the same server and trust: its own full handshake, never the first host's session.
  EXPECT_FALSE(connect_once(server->get(), client->get(), "other.example.test", done));
  EXPECT_TRUE(done);
  // Another context (another rule's trust, even with the same file): nothing kept there yet.
  auto other_client = upstream_client_context(ca_file);
  ASSERT_TRUE(other_client.is_ok());
  EXPECT_FALSE(connect_once(server->get(), other_client->get(), "api.example.test", done));
  EXPECT_TRUE(done);
  // A server whose certificate does not verify gets no session kept, so nothing to resume at the next connection.
  auto rogue_ca = authority({"api.example.test", "other.example.test"});
  ASSERT_NE(nullptr, rogue_ca);
  auto rogue_server = rogue_ca->server_context();
  auto third_client = upstream_client_context(ca_file);
  ASSERT_TRUE(third_client.is_ok());
  EXPECT_FALSE(connect_once(rogue_server->get(), third_client->get(), "api.example.test", done));
  EXPECT_FALSE(done);
  EXPECT_FALSE(connect_once(server->get(), third_client->get(), "api.example.test", done));
  EXPECT_TRUE(done);
}

TEST(TlsAuthorityUpstream, OffersHttp11Only) {
  auto upstream_ca = authority();
  ASSERT_NE(nullptr, upstream_ca);
  TempDir dir;
  auto client = upstream_client_context(dir.write("ca.pem", upstream_ca->certificate_pem()));
  auto server = upstream_ca->server_context();
  ASSERT_TRUE(client.is_ok() && server.is_ok());
  std::string offered;
  SSL_CTX_set_alpn_select_cb(
      server->get(),
      [](SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in, unsigned int in_length,
         void* arg) {
        static_cast<std::string*>(arg)->assign(reinterpret_cast<const char*>(in), in_length);
        *out = in + 1;
        *out_length = in[0];
        return SSL_TLSEXT_ERR_OK;
      },
      &offered);
  Handshake h = handshake(server->get(), client->get(), upstream_setup("api.example.test"));
  EXPECT_EQ(kDone, h.client) << h.client_error;
  EXPECT_EQ(alpn_wire({"http/1.1"}), offered);
}

TEST(TlsAuthorityUpstream, SystemStoreWhenNoCaFile) {
  auto client = upstream_client_context("");
  ASSERT_TRUE(client.is_ok()) << client.status().message();
  EXPECT_EQ(SSL_VERIFY_PEER, SSL_CTX_get_verify_mode(client->get()));
  EXPECT_EQ(TLS1_2_VERSION, SSL_CTX_get_min_proto_version(client->get()));
  // A sandbox authority is in no system store: its leaves are refused.
  auto ca = authority();
  ASSERT_NE(nullptr, ca);
  auto server = ca->server_context();
  Handshake h = handshake(server->get(), client->get(), upstream_setup("api.example.test"));
  EXPECT_EQ(kFailed, h.client);
  EXPECT_EQ(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, h.verify_result);
}

TEST(TlsAuthorityUpstream, UnreadableCaFileIsAnError) {
  TempDir dir;
  auto missing = upstream_client_context(dir.path() + "/missing.pem");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(ENOENT, missing.status().errno_value()) << missing.status().message();
  EXPECT_NE(std::string::npos, missing.status().message().find("missing.pem")) << missing.status().message();
  EXPECT_FALSE(upstream_client_context(dir.write("junk.pem", "not a certificate\n")).is_ok());
  EXPECT_FALSE(upstream_client_context(dir.write("empty.pem", "")).is_ok());
}

TEST(TlsAuthorityUpstream, SetUpstreamHostTakesDnsNamesOnly) {
  auto client = upstream_client_context("");
  ASSERT_TRUE(client.is_ok());
  SslPtr ssl(SSL_new(client->get()));
  for (const char* host : {"", "192.0.2.1", "[::1]", "bad host", "*.example.org"}) {
    EXPECT_FALSE(set_upstream_host(ssl.get(), host).is_ok()) << host;
  }
  EXPECT_TRUE(set_upstream_host(ssl.get(), "API.example.test.").is_ok());
  EXPECT_STREQ("api.example.test", SSL_get_servername(ssl.get(), TLSEXT_NAMETYPE_host_name));
}

}  // namespace
}  // namespace oishell::relay
