#pragma once
// The HTTPS upstream of the terminated-HTTPS benchmark (https_bench.h): a threaded TLS server on a loopback
// address, one blocking thread per connection, HTTP/1.1 keep-alive. Its certificates come from an authority of its
// own (TlsAuthority, standing in for a public CA) covering `names` by SNI; the CA's PEM is written to ca_file()
// for clients and for a rule's `upstream_ca`.
//   GET /bytes/N   N bytes ('x', from a static 1 MiB block), Content-Length
//   POST /count    reads the Content-Length body, answers its size
// Unlike tests/relay/test_tls_server.h (which builds each body in memory and checks its bytes), it moves bulk data
// as cheaply as a server can, so that the benchmark measures the path, not the server.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/relay/tls_authority.h"

namespace oishell::bench {

class HttpsUpstream {
 public:
  // Listens on ip (any port) and serves on a detached acceptor thread until the process ends.
  [[nodiscard]] static Result<std::unique_ptr<HttpsUpstream>> start(const char* ip,
                                                                    const std::vector<std::string>& names);
  ~HttpsUpstream();  // removes ca_file(); the acceptor is stopped by closing the listener
  uint16_t port() const { return port_; }
  const std::string& ca_file() const { return ca_file_; }

 private:
  HttpsUpstream() = default;
  std::unique_ptr<relay::TlsAuthority> authority_;  // outlives the context (its SNI callback)
  relay::SslCtxPtr context_;
  UniqueFd listener_;
  uint16_t port_ = 0;
  std::string dir_, ca_file_;
};

}  // namespace oishell::bench
