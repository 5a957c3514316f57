// Byte-exact downloads through the relay: every byte compared, no truncation, over CONNECT (bulk path),
// absolute-form forwarding and SOCKS5. OISHELL_RELAY_DOWNLOADS sets the number of 20 MiB CONNECT downloads
// (default 50; the long run is OISHELL_RELAY_DOWNLOADS=1000).
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/relay/test_util.h"

namespace oishell::relay::testing {
namespace {

constexpr uint64_t kSize = 20ull * 1024 * 1024;

int download_count() {
  const char* env = std::getenv("OISHELL_RELAY_DOWNLOADS");
  int n = env ? std::atoi(env) : 50;
  return n > 0 ? n : 50;
}

// Reads one response to GET /bytes/kSize and checks it byte for byte; returns a description of the first
// difference, or "".
std::string check_download(int fd) {
  std::string head = read_head(fd);
  std::string expected_head = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kSize) + "\r\n\r\n";
  if (head != expected_head) return "bad head: " + head;
  std::vector<char> buf(1 << 20);
  uint64_t got = 0;
  while (got < kSize) {
    ssize_t n = recv(fd, buf.data(), std::min<uint64_t>(buf.size(), kSize - got), 0);
    if (n <= 0) return "truncated at " + std::to_string(got);
    for (ssize_t i = 0; i < n; ++i) {
      if (static_cast<uint8_t>(buf[i]) != body_byte(got + i)) return "differs at " + std::to_string(got + i);
    }
    got += static_cast<uint64_t>(n);
  }
  char extra;
  if (recv(fd, &extra, 1, 0) != 0) return "bytes after the body or no clean close";
  return "";
}

class RelayDownloadTest : public ::testing::Test {
 protected:
  Server http_{Server::Kind::http, "127.0.0.2"};
  NetworkSpec spec() {
    NetworkSpec s;
    s.allow = {rule("files.example")};
    s.hosts["files.example"] = "127.0.0.2";
    s.allow_private = {cidr("127.0.0.0/8")};
    return s;
  }
  std::string authority() const { return "files.example:" + std::to_string(http_.port()); }
  std::string request() const {
    return "GET /bytes/" + std::to_string(kSize) + " HTTP/1.1\r\nHost: " + authority() + "\r\nConnection: close\r\n\r\n";
  }
};

TEST_F(RelayDownloadTest, ConnectDownloadsAreByteExact) {
  RelayUnderTest relay(spec());
  int n = download_count();
  for (int i = 0; i < n; ++i) {
    std::string refusal;
    UniqueFd fd = http_connect("127.0.0.1", relay.http_port, authority(), &refusal);
    ASSERT_TRUE(fd.valid()) << refusal;
    send_all(fd.get(), request());
    ASSERT_EQ("", check_download(fd.get())) << "download " << i << " of " << n;
  }
}

TEST_F(RelayDownloadTest, ForwardedAndSocksDownloadsAreByteExact) {
  RelayUnderTest relay(spec());
  for (int i = 0; i < 5; ++i) {
    UniqueFd fd = connect_to("127.0.0.1", relay.http_port);
    std::string req = request();
    req.replace(4, 0, "http://" + authority());
    send_all(fd.get(), req);
    ASSERT_EQ("", check_download(fd.get())) << "forwarded download " << i;
    int code = -1;
    UniqueFd s = socks_connect(relay.socks_port, "files.example", http_.port(), &code);
    ASSERT_TRUE(s.valid()) << code;
    send_all(s.get(), request());
    ASSERT_EQ("", check_download(s.get())) << "socks download " << i;
  }
}

}  // namespace
}  // namespace oishell::relay::testing
