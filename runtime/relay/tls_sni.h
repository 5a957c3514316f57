#pragma once
// Peeks the server name (SNI) in a TLS ClientHello, to compare it with the CONNECT host (domain fronting).
// Handles a ClientHello split over several records or reads. Pure function.
#include <string>
#include <string_view>

namespace oishell::relay {

enum class SniStatus {
  need_more,  // a TLS handshake so far, but the ClientHello is not complete yet
  not_tls,    // the first bytes are not a TLS handshake record
  no_sni,     // a complete ClientHello without a server_name
  found,      // `name` holds the server name
  malformed,  // a TLS handshake record that is not a well-formed ClientHello
};

struct SniResult {
  SniStatus status = SniStatus::need_more;
  std::string name;
  std::string error;
};

// `max_hello` bounds the ClientHello size accepted (larger is malformed).
SniResult peek_client_hello_sni(std::string_view data, size_t max_hello = 64 * 1024);

}  // namespace oishell::relay
