#include "tests/relay/test_tls_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

#include "tests/relay/test_util.h"

namespace oishell::relay::testing {
namespace {

bool write_all(SSL* ssl, std::string_view data) {
  while (!data.empty()) {
    int n = SSL_write(ssl, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 20)));
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads into `buffer` until it holds `needle`; false on EOF or error.
bool read_until(SSL* ssl, std::string& buffer, std::string_view needle) {
  char chunk[16384];
  while (buffer.find(needle) == std::string::npos) {
    int n = SSL_read(ssl, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  return true;
}

// Takes `n` body bytes from `buffer` and the connection; false on EOF.
bool skip_bytes(SSL* ssl, std::string& buffer, uint64_t n) {
  char chunk[16384];
  while (buffer.size() < n) {
    n -= buffer.size();
    buffer.clear();
    int got = SSL_read(ssl, chunk, sizeof chunk);
    if (got <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(got));
  }
  buffer.erase(0, n);
  return true;
}

std::string header_value(const std::string& head, const std::string& lower_name) {
  size_t at = 0;
  while ((at = head.find("\r\n", at)) != std::string::npos) {
    at += 2;
    size_t colon = head.find(':', at);
    size_t end = head.find("\r\n", at);
    if (colon == std::string::npos || end == std::string::npos || colon > end) continue;
    std::string name = head.substr(at, colon - at);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name != lower_name) continue;
    std::string value = head.substr(colon + 1, end - colon - 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    return value;
  }
  return "";
}

// The file `directory`/`relative` when it is a regular file and `relative` has no `..` segment.
std::optional<std::string> read_static(const std::string& directory, const std::string& relative) {
  if (relative.empty() || relative.find("..") != std::string::npos) return std::nullopt;
  const std::string path = directory + "/" + relative;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) return std::nullopt;
  return content;
}

std::string response(int code, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(code) + (code == 200 ? " OK" : " Not Found") +
         "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

TlsTestServer::TlsTestServer(const std::string& ip, const std::vector<std::string>& names) : ip_(ip) {
  auto authority = TlsAuthority::create(names, std::chrono::hours(1));
  if (!authority.is_ok()) return;
  authority_ = std::move(authority.value());
  auto context = authority_->server_context();
  if (!context.is_ok()) return;
  context_ = std::move(context.value());
  char tmpl[] = "/tmp/oishell-tls-server-XXXXXX";
  if (!::mkdtemp(tmpl)) return;
  dir_ = tmpl;
  ca_file_ = dir_ + "/ca.pem";
  std::ofstream(ca_file_) << authority_->certificate_pem();
  listener_ = listen_on(ip_, port_);
  if (!listener_) return;
  ok_ = true;
  acceptor_ = std::thread([this] {
    while (!stop_) {
      pollfd p{listener_.get(), POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard lock(mu_);
      workers_.emplace_back([this, fd] { serve(UniqueFd(fd)); });
    }
  });
}

TlsTestServer::~TlsTestServer() {
  stop_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  listener_.reset();
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mu_);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.join();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::vector<std::string> TlsTestServer::request_heads() const {
  std::lock_guard lock(mu_);
  return heads_;
}

void TlsTestServer::serve_directory(const std::string& url_prefix, const std::string& directory) {
  std::lock_guard lock(mu_);
  directories_.emplace_back(url_prefix + "/", directory);
}

void TlsTestServer::serve(UniqueFd fd) {
  timeval timeout{10, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  SslPtr ssl(SSL_new(context_.get()));
  if (!ssl) return;
  SSL_set_fd(ssl.get(), fd.get());
  if (SSL_accept(ssl.get()) == 1) handle(ssl.get());
  SSL_shutdown(ssl.get());
}

void TlsTestServer::handle(SSL* ssl) {
  std::string buffer;
  while (!stop_) {
    if (!read_until(ssl, buffer, "\r\n\r\n")) return;
    const size_t end = buffer.find("\r\n\r\n") + 4;
    const std::string head = buffer.substr(0, end);
    buffer.erase(0, end);
    {
      std::lock_guard lock(mu_);
      heads_.push_back(head);
    }
    const std::string line = head.substr(0, head.find("\r\n"));
    const std::string length = header_value(head, "content-length");
    const bool chunked = header_value(head, "transfer-encoding") == "chunked";
    uint64_t body = 0;
    if (!length.empty()) {
      body = std::strtoull(length.c_str(), nullptr, 10);
      if (!skip_bytes(ssl, buffer, body)) return;
    } else if (chunked) {
      for (;;) {
        if (!read_until(ssl, buffer, "\r\n")) return;
        const uint64_t size = std::strtoull(buffer.c_str(), nullptr, 16);
        buffer.erase(0, buffer.find("\r\n") + 2);
        if (!skip_bytes(ssl, buffer, size + 2)) return;  // the chunk and its CRLF
        body += size;
        if (size == 0) break;  // (no trailers in these tests)
      }
    }
    std::string reply;
    const std::string target = line.substr(0, line.rfind(' '));  // "GET /path?query"
    std::optional<std::pair<std::string, std::string>> served;
    {
      std::lock_guard lock(mu_);
      for (const auto& entry : directories_) {
        if (target.starts_with("GET " + entry.first)) served = entry;
      }
    }
    if (served) {
      const size_t from = 4 + served->first.size();
      auto file = read_static(served->second, target.substr(from, target.find('?') - from));
      reply = file ? response(200, *file) : response(404, "not found\n");
    } else if (line.starts_with("GET /bytes/")) {
      const uint64_t n = std::strtoull(line.c_str() + std::strlen("GET /bytes/"), nullptr, 10);
      std::string bytes(n, '\0');
      for (uint64_t i = 0; i < n; ++i) bytes[i] = static_cast<char>(body_byte(i));
      reply = response(200, bytes);
    } else if (line.starts_with("GET /head ")) {
      reply = response(200, head);
    } else if (line.starts_with("GET /echo/chunked/")) {
      const uint64_t size = std::max<uint64_t>(1, std::strtoull(line.c_str() + std::strlen("GET /echo/chunked/"),
                                                                 nullptr, 10));
      reply = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
      char hex[32];
      for (size_t at = 0; at < head.size(); at += size) {
        const std::string piece = head.substr(at, size);
        std::snprintf(hex, sizeof hex, "%zx\r\n", piece.size());
        reply += hex + piece + "\r\n";
      }
      reply += "0\r\n\r\n";
    } else if (line.starts_with("GET /echo/header ")) {
      reply = "HTTP/1.1 200 OK\r\nX-Echo-Authorization: " + header_value(head, "authorization") +
              "\r\nContent-Length: 2\r\n\r\nok";
    } else if (line.starts_with("POST /count ")) {
      reply = response(200, std::to_string(body));
    } else {
      reply = response(404, "not found\n");
    }
    if (!write_all(ssl, reply)) return;
  }
}

}  // namespace oishell::relay::testing
