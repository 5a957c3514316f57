#pragma once
// `oishell mcp --http ADDRESS [--token-file FILE]`: the listening address and the token, from the command line.
#include <string>

#include "base/status.h"

namespace oishell::cli {

struct HttpAddress {
  std::string host;  // as given, without brackets: "127.0.0.1", "::1", "localhost"
  int port = 0;      // 0: any free port
};

// "127.0.0.1:8931", "[::1]:0", "localhost:8931". Whether the host is loopback is listen_loopback's question.
[[nodiscard]] Result<HttpAddress> parse_http_address(const std::string& text);

// The server's token kept in `path` so that a client's configuration can name it: read when the file exists (it
// must be a regular file of this user that nobody else may read or write, holding at least 32 characters of a
// bearer token), else created (mode 0600, never through a symlink) with a fresh 256-bit one.
[[nodiscard]] Result<std::string> load_or_create_token_file(const std::string& path);

}  // namespace oishell::cli
