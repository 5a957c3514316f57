// The HTTPS test upstream itself: a client that trusts only its CA file gets answers on one kept-alive connection;
// one that trusts nothing of it is refused.
#include "tests/relay/test_tls_server.h"

#include <gtest/gtest.h>

#include "runtime/relay/tls_upstream.h"
#include "tests/relay/test_util.h"

namespace oishell::relay::testing {
namespace {

std::string read_response(SSL* ssl) {
  std::string data;
  char chunk[4096];
  size_t need = std::string::npos;
  while (need == std::string::npos || data.size() < need) {
    int n = SSL_read(ssl, chunk, sizeof chunk);
    if (n <= 0) break;
    data.append(chunk, static_cast<size_t>(n));
    size_t end = data.find("\r\n\r\n");
    size_t length = data.find("Content-Length: ");
    if (end != std::string::npos && length != std::string::npos) {
      need = end + 4 + std::stoul(data.substr(length + 16));
    }
  }
  return data;
}

TEST(TlsTestServer, ServesAClientThatTrustsItsCaOnAKeptAliveConnection) {
  TlsTestServer server("127.0.0.2", {"*.example.test"});
  ASSERT_TRUE(server.ok());
  auto context = upstream_client_context(server.ca_file());
  ASSERT_TRUE(context.is_ok()) << context.status().message();
  UniqueFd fd = connect_to(server.ip(), server.port());
  ASSERT_TRUE(fd);
  SslPtr ssl(SSL_new(context->get()));
  ASSERT_TRUE(set_upstream_host(ssl.get(), "api.example.test").is_ok());
  SSL_set_fd(ssl.get(), fd.get());
  ASSERT_EQ(1, SSL_connect(ssl.get()));
  const std::string get = "GET /head HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer real\r\n\r\n";
  ASSERT_EQ(static_cast<int>(get.size()), SSL_write(ssl.get(), get.data(), static_cast<int>(get.size())));
  std::string first = read_response(ssl.get());
  EXPECT_NE(std::string::npos, first.find("\r\n\r\n" + get)) << first;  // the head came back as the body
  const std::string post = "POST /count HTTP/1.1\r\nHost: api.example.test\r\nContent-Length: 5\r\n\r\nhello";
  ASSERT_EQ(static_cast<int>(post.size()), SSL_write(ssl.get(), post.data(), static_cast<int>(post.size())));
  std::string second = read_response(ssl.get());
  EXPECT_TRUE(second.ends_with("\r\n\r\n5")) << second;
  EXPECT_EQ(2u, server.request_heads().size());
}

TEST(TlsTestServer, AClientThatDoesNotTrustItsCaIsRefused) {
  TlsTestServer server("127.0.0.2", {"api.example.test"});
  ASSERT_TRUE(server.ok());
  TlsTestServer other("127.0.0.2", {"api.example.test"});  // another authority's CA file
  auto context = upstream_client_context(other.ca_file());
  ASSERT_TRUE(context.is_ok());
  UniqueFd fd = connect_to(server.ip(), server.port());
  SslPtr ssl(SSL_new(context->get()));
  ASSERT_TRUE(set_upstream_host(ssl.get(), "api.example.test").is_ok());
  SSL_set_fd(ssl.get(), fd.get());
  EXPECT_NE(1, SSL_connect(ssl.get()));
  EXPECT_EQ(X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, SSL_get_verify_result(ssl.get()));
}

}  // namespace
}  // namespace oishell::relay::testing
