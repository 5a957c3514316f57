// Terminated HTTPS through the relay's event loop (connection_terminated.cc, which streams each socket read through
// the terminator and sends its records as they come): bulk bodies in both directions arrive byte-exact on one
// kept-alive connection, as the sandbox's TLS client sees them. The terminator's own tests (https_terminator_test)
// drive it in memory; this one goes through real sockets, the relay thread and the bench-sized buffers.
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "runtime/relay/tls_openssl.h"
#include "tests/relay/test_tls_server.h"
#include "tests/relay/test_util.h"
#include "tests/relay/tls_handshake.h"

namespace oishell::relay::testing {
namespace {

constexpr uint64_t kBodySize = 20ull * 1024 * 1024;
const std::string kHost = "files.example.test";

bool ssl_write_all(SSL* ssl, std::string_view data) {
  while (!data.empty()) {
    int n = SSL_write(ssl, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 20)));
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// One response: its head, then exactly Content-Length body bytes into `body`. False on a short read.
bool read_response(SSL* ssl, std::string& head, std::string& body) {
  std::string in;
  char buf[64 * 1024];
  size_t end;
  while ((end = in.find("\r\n\r\n")) == std::string::npos) {
    int n = SSL_read(ssl, buf, sizeof buf);
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
  }
  head = in.substr(0, end + 4);
  size_t at = head.find("Content-Length: ");
  if (at == std::string::npos) return false;
  uint64_t length = std::strtoull(head.c_str() + at + 16, nullptr, 10);
  body = in.substr(end + 4);
  while (body.size() < length) {
    int n = SSL_read(ssl, buf, static_cast<int>(std::min<uint64_t>(sizeof buf, length - body.size())));
    if (n <= 0) return false;
    body.append(buf, static_cast<size_t>(n));
  }
  return body.size() == length;
}

// The first byte where `body` is not the test pattern, or "".
std::string check_pattern(const std::string& body) {
  for (uint64_t i = 0; i < body.size(); ++i) {
    if (static_cast<uint8_t>(body[i]) != body_byte(i)) return "differs at " + std::to_string(i);
  }
  return "";
}

TEST(RelayHttpsDownloadTest, TerminatedBodiesAreByteExactBothWaysOnOneConnection) {
  TlsTestServer upstream("127.0.0.2", {kHost});
  ASSERT_TRUE(upstream.ok());
  HostRule terminate = rule(kHost);
  terminate.tls = HostRule::Tls::terminate;
  terminate.upstream_ca = upstream.ca_file();
  NetworkSpec spec;
  spec.allow = {terminate};
  spec.hosts[kHost] = "127.0.0.2";
  spec.allow_private = {cidr("127.0.0.0/8")};
  std::unique_ptr<TlsAuthority> sandbox_ca = authority({kHost});
  ASSERT_NE(nullptr, sandbox_ca);
  X509Ptr sandbox_ca_certificate = parse_pem(sandbox_ca->certificate_pem());
  RelayUnderTest relay(spec, {}, nullptr, [&](Relay& r) {
    EXPECT_TRUE(r.enable_termination(std::move(sandbox_ca), SandboxCredentials{}).is_ok());
  });

  const std::string authority_text = kHost + ":" + std::to_string(upstream.port());
  std::string refusal;
  UniqueFd fd = http_connect("127.0.0.1", relay.http_port, authority_text, &refusal);
  ASSERT_TRUE(fd) << refusal;
  SslCtxPtr context(SSL_CTX_new(TLS_client_method()));
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(context.get()), sandbox_ca_certificate.get());
  SslPtr ssl(SSL_new(context.get()));
  SSL_set_fd(ssl.get(), fd.get());
  SSL_set_tlsext_host_name(ssl.get(), kHost.c_str());
  SSL_set1_host(ssl.get(), kHost.c_str());
  ASSERT_EQ(1, SSL_connect(ssl.get())) << openssl_error("SSL_connect").message();

  std::string head, body;
  // Download.
  ASSERT_TRUE(ssl_write_all(ssl.get(), "GET /bytes/" + std::to_string(kBodySize) + " HTTP/1.1\r\nHost: " +
                                           authority_text + "\r\n\r\n"));
  ASSERT_TRUE(read_response(ssl.get(), head, body)) << head << " after " << body.size() << " body bytes";
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200")) << head;
  EXPECT_EQ(kBodySize, body.size());
  EXPECT_EQ("", check_pattern(body));
  // Upload, on the same connection: the upstream counts what it received.
  std::string upload(kBodySize, '\0');
  for (uint64_t i = 0; i < kBodySize; ++i) upload[i] = static_cast<char>(body_byte(i));
  ASSERT_TRUE(ssl_write_all(ssl.get(), "POST /count HTTP/1.1\r\nHost: " + authority_text +
                                           "\r\nContent-Length: " + std::to_string(kBodySize) + "\r\n\r\n"));
  ASSERT_TRUE(ssl_write_all(ssl.get(), upload));
  ASSERT_TRUE(read_response(ssl.get(), head, body)) << head;
  EXPECT_EQ(std::to_string(kBodySize), body);
  // And a small request after both, still on that connection: each response was framed to its end.
  ASSERT_TRUE(ssl_write_all(ssl.get(), "GET /bytes/1000 HTTP/1.1\r\nHost: " + authority_text + "\r\n\r\n"));
  ASSERT_TRUE(read_response(ssl.get(), head, body)) << head;
  EXPECT_EQ(1000u, body.size());
  EXPECT_EQ("", check_pattern(body));
  EXPECT_EQ(3u, upstream.request_heads().size());  // all three went upstream
}

}  // namespace
}  // namespace oishell::relay::testing
