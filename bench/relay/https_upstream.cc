#include "bench/relay/https_upstream.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/relay/bench_net.h"

namespace oishell::bench {
namespace {

constexpr size_t kBlock = 1 << 20;

bool ssl_write_all(SSL* ssl, const char* data, size_t size) {
  while (size > 0) {
    int n = SSL_write(ssl, data, static_cast<int>(std::min(size, kBlock)));
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

uint64_t content_length(const std::string& head) {
  for (const char* name : {"\r\nContent-Length:", "\r\ncontent-length:"}) {
    size_t at = head.find(name);
    if (at != std::string::npos) return std::strtoull(head.c_str() + at + std::strlen(name), nullptr, 10);
  }
  return 0;
}

// Serves one connection's requests until it ends.
void serve(UniqueFd fd, SSL_CTX* context) {
  static const std::string block(kBlock, 'x');
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  relay::SslPtr ssl(SSL_new(context));
  if (!ssl) return;
  SSL_set_fd(ssl.get(), fd.get());
  if (SSL_accept(ssl.get()) != 1) return;
  std::string in;
  static thread_local std::vector<char> buf(256 * 1024);
  for (;;) {
    size_t end;
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
      int n = SSL_read(ssl.get(), buf.data(), static_cast<int>(buf.size()));
      if (n <= 0) return;
      in.append(buf.data(), static_cast<size_t>(n));
    }
    const std::string head = in.substr(0, end + 4);
    in.erase(0, end + 4);
    std::string reply;
    if (head.starts_with("POST /count ")) {
      uint64_t left = content_length(head), total = left;
      uint64_t have = std::min<uint64_t>(left, in.size());
      in.erase(0, have);
      left -= have;
      while (left > 0) {
        int n = SSL_read(ssl.get(), buf.data(), static_cast<int>(std::min<uint64_t>(buf.size(), left)));
        if (n <= 0) return;
        left -= static_cast<uint64_t>(n);
      }
      std::string body = std::to_string(total);
      reply = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
      if (!ssl_write_all(ssl.get(), reply.data(), reply.size())) return;
      continue;
    }
    uint64_t size = head.starts_with("GET /bytes/") ? std::strtoull(head.c_str() + 11, nullptr, 10) : 0;
    reply = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n";
    // A small body goes with the head in one write (one record), as a server's buffered writer would send it.
    if (size <= 4096) {
      reply.append(block, 0, size);
      size = 0;
    }
    if (!ssl_write_all(ssl.get(), reply.data(), reply.size())) return;
    for (uint64_t off = 0; off < size;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, size - off));
      if (!ssl_write_all(ssl.get(), block.data(), n)) return;
      off += n;
    }
  }
}

}  // namespace

Result<std::unique_ptr<HttpsUpstream>> HttpsUpstream::start(const char* ip, const std::vector<std::string>& names) {
  std::unique_ptr<HttpsUpstream> server(new HttpsUpstream());
  auto authority = relay::TlsAuthority::create(names, std::chrono::hours(24));
  if (!authority) return authority.status().with_context("bench upstream authority");
  server->authority_ = std::move(authority).value();
  auto context = server->authority_->server_context();
  if (!context) return context.status().with_context("bench upstream context");
  server->context_ = std::move(context).value();
  char dir[] = "/tmp/oishell-https-bench-XXXXXX";
  if (!::mkdtemp(dir)) return Status::error("mkdtemp(/tmp/oishell-https-bench-XXXXXX) failed");
  server->dir_ = dir;
  server->ca_file_ = server->dir_ + "/upstream-ca.pem";
  std::ofstream(server->ca_file_) << server->authority_->certificate_pem();
  server->listener_ = tcp_listen(ip, server->port_);
  std::thread([listener = server->listener_.get(), context = server->context_.get()] {
    for (;;) {
      int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      std::thread(serve, UniqueFd(c), context).detach();
    }
  }).detach();
  return server;
}

HttpsUpstream::~HttpsUpstream() {
  if (listener_) ::shutdown(listener_.get(), SHUT_RDWR);  // wakes the acceptor's accept4 with an error
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace oishell::bench
