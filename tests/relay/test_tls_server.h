#pragma once
// An HTTPS upstream for the relay's tests (issue 16): a threaded server on 127.0.0.x whose certificates come from
// a test authority of its own (TlsAuthority, standing in for a public CA), whose PEM it writes to ca_file() for a
// policy's `upstream_ca`. HTTP/1.1 with keep-alive:
//   GET /bytes/N   N deterministic bytes (body_byte), Content-Length
//   GET /head      the request head it received, as the body (what a terminating relay sent upstream)
//   GET /echo/chunked/N  the same, chunked in chunks of N bytes (the last may be shorter)
//   GET /echo/header     the request's Authorization value in the response header X-Echo-Authorization
//   POST /count    the number of body bytes it read (Content-Length or chunked), as the body
//   GET <prefix>/F the file F under a directory given to serve_directory() (a query is ignored; 404 when absent),
//                  e.g. a bare git repository for git's "dumb HTTP" protocol
//   anything else  404
// Every request head received is kept (request_heads()). No traffic leaves loopback.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "runtime/relay/tls_authority.h"

namespace oishell::relay::testing {

class TlsTestServer {
 public:
  // `names`: what the test authority may certify (as a policy writes hosts: "api.example.test", "*.example.test").
  TlsTestServer(const std::string& ip, const std::vector<std::string>& names);
  ~TlsTestServer();
  bool ok() const { return ok_; }
  uint16_t port() const { return port_; }
  const std::string& ip() const { return ip_; }
  const std::string& ca_file() const { return ca_file_; }
  std::vector<std::string> request_heads() const;
  // Serves the regular files under `directory` at `url_prefix` ("/repo.git") from now on, besides any prefix given
  // before. Paths with a `..` are not served.
  void serve_directory(const std::string& url_prefix, const std::string& directory);

 private:
  void serve(UniqueFd fd);
  void handle(SSL* ssl);
  std::string ip_;
  uint16_t port_ = 0;
  bool ok_ = false;
  std::string dir_, ca_file_;
  std::unique_ptr<TlsAuthority> authority_;
  SslCtxPtr context_;
  UniqueFd listener_;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<std::string> heads_;
  std::vector<std::pair<std::string, std::string>> directories_;  // (url prefix + "/", directory)
  std::vector<std::thread> workers_;
};

}  // namespace oishell::relay::testing
