#include "tools/oishell/mcp_http_options.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/http/bearer_token.h"
#include "base/unique_fd.h"

namespace oishell::cli {
namespace {

constexpr size_t kMinTokenChars = 32;

bool token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
}

}  // namespace

Result<HttpAddress> parse_http_address(const std::string& text) {
  HttpAddress address;
  std::string port;
  if (text.starts_with("[")) {
    const size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return Status::error("--http `" + text + "`: expected [IPV6]:PORT");
    address.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || text.find(':') != colon)
      return Status::error("--http `" + text + "`: expected HOST:PORT (127.0.0.1:8931, [::1]:8931)");
    address.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535)
    return Status::error("--http `" + text + "`: the port must be a number from 0 to 65535");
  address.port = std::stoi(port);
  return address;
}

Result<std::string> load_or_create_token_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno != ENOENT) return Status::from_errno(errno, "open(" + path + ")");
    fd.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return Status::from_errno(errno, "open(" + path + ", O_CREAT|O_EXCL)");
    const std::string token = http::generate_token();
    const std::string line = token + "\n";
    if (::write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      return Status::from_errno(errno, "write(" + path + ")");
    return token;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::from_errno(errno, "fstat(" + path + ")");
  if (!S_ISREG(st.st_mode)) return Status::error("the token file " + path + " is not a regular file");
  if (st.st_uid != ::geteuid())
    return Status::error("the token file " + path + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::error("the token file " + path + " may be read or written by others (mode " + mode +
                         "): chmod 600 it");
  }
  std::string text;
  char chunk[256];
  for (ssize_t n; (n = ::read(fd.get(), chunk, sizeof chunk)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::from_errno(errno, "read(" + path + ")");
    text.append(chunk, static_cast<size_t>(n));
    if (text.size() > 4096) return Status::error("the token file " + path + " is larger than a token");
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.size() < kMinTokenChars)
    return Status::error("the token in " + path + " is shorter than " + std::to_string(kMinTokenChars) +
                         " characters (delete the file to have a new one made)");
  for (char c : text) {
    if (!token_char(c)) return Status::error("the token in " + path + " has a character a bearer token cannot hold");
  }
  return text;
}

}  // namespace oishell::cli
