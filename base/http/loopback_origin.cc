#include "base/http/loopback_origin.h"

namespace oishell::http {

LoopbackOrigin::LoopbackOrigin(const std::string& host, int port) {
  const std::string p = ":" + std::to_string(port);
  const bool v6 = host.find(':') != std::string::npos;
  allowed_hosts_[0] = (v6 ? "[" + host + "]" : host) + p;
  allowed_hosts_[1] = "localhost" + p;
  allowed_origins_[0] = "http://" + allowed_hosts_[0];
  allowed_origins_[1] = "http://" + allowed_hosts_[1];
}

OriginVerdict LoopbackOrigin::check(const HttpRequest& request) const {
  const std::string* host = request.header("Host");
  if (!host || (!ascii_iequals(*host, allowed_hosts_[0]) && !ascii_iequals(*host, allowed_hosts_[1]))) {
    return {421, "this server answers only to " + allowed_hosts_[0] + " (the Host was " +
                     (host ? "`" + *host + "`" : std::string("missing")) + ")"};
  }
  const std::string* origin = request.header("Origin");
  if (origin && *origin != allowed_origins_[0] && *origin != allowed_origins_[1]) {
    return {403, "requests from other origins are refused"};
  }
  return {};
}

}  // namespace oishell::http
