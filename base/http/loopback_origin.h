#pragma once
// Whom a loopback server answers (`interpreter --gui`, `oishell mcp --http`): pure checks on a parsed request.
//
//   Host    exactly the address served ("127.0.0.1:PORT" or "localhost:PORT"; "[::1]:PORT" on IPv6): a page of
//           another site whose name was rebound to 127.0.0.1 (DNS rebinding) sends its own name, and is refused
//           with 421 Misdirected Request
//   Origin  when sent, this server's own ("http://127.0.0.1:PORT", "http://localhost:PORT"): a page of any other
//           origin is refused with 403 (a program that is not a browser sends none)
// Tokens, methods and content types are each server's own rules, checked after these.
#include <string>

#include "base/http/http_message.h"

namespace oishell::http {

struct OriginVerdict {
  int status = 0;      // 0: allowed; else the status to answer (421, 403)
  std::string reason;  // why not
};

class LoopbackOrigin {
 public:
  // `host`: the numeric address listened on ("127.0.0.1" or "::1").
  LoopbackOrigin(const std::string& host, int port);

  // The Host, then the Origin when one was sent.
  OriginVerdict check(const HttpRequest& request) const;
  // "127.0.0.1:PORT", "[::1]:PORT": what a client's Host names.
  const std::string& host_port() const { return allowed_hosts_[0]; }
  // "http://127.0.0.1:PORT"
  const std::string& origin() const { return allowed_origins_[0]; }

 private:
  std::string allowed_hosts_[2];    // Host values
  std::string allowed_origins_[2];  // Origin values
};

}  // namespace oishell::http
