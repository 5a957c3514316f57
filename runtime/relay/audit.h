#pragma once
// The relay's events (schema in docs/network.md): net.allowed, net.denied, net.closed, net.ask, net.error.
#include <cstdint>
#include <string_view>

#include "runtime/outside/events.h"

namespace oishell::relay {

void emit_denied(EventSink& sink, std::string_view protocol, std::string_view host, uint16_t port,
                 std::string_view reason, std::string_view rule);
// A request a terminating rule (tls: terminate) refused: its method and path, and the credential when it was one.
void emit_request_denied(EventSink& sink, std::string_view host, uint16_t port, std::string_view method,
                         std::string_view path, std::string_view reason, std::string_view rule,
                         std::string_view credential);
// A credential the relay put into a request (its name, never its secret).
void emit_credential_used(EventSink& sink, std::string_view host, uint16_t port, std::string_view method,
                          std::string_view path, std::string_view credential);
// A response carried a secret the relay had put in a request; the sandbox got asterisks in its place (issue 16).
void emit_secret_withheld(EventSink& sink, std::string_view host, uint16_t port, std::string_view credential);
void emit_allowed(EventSink& sink, std::string_view protocol, std::string_view host, uint16_t port,
                  std::string_view rule, std::string_view address);
// `reason`, when not empty: why the relay ended it (a policy change that no longer allows the destination).
void emit_closed(EventSink& sink, std::string_view host, uint16_t port, uint64_t bytes_up, uint64_t bytes_down,
                 uint64_t duration_ms, std::string_view reason = {});
void emit_ask(EventSink& sink, uint64_t id, std::string_view host, uint16_t port);
void emit_error(EventSink& sink, std::string_view host, uint16_t port, std::string_view reason);

}  // namespace oishell::relay
