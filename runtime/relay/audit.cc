#include "runtime/relay/audit.h"

#include <string>

namespace oishell::relay {

void emit_denied(EventSink& sink, std::string_view protocol, std::string_view host, uint16_t port,
                 std::string_view reason, std::string_view rule) {
  sink.emit({{"event", "net.denied"}, {"protocol", protocol}, {"host", host}, {"port", port},
             {"reason", reason}, {"rule", rule}});
}

void emit_request_denied(EventSink& sink, std::string_view host, uint16_t port, std::string_view method,
                         std::string_view path, std::string_view reason, std::string_view rule,
                         std::string_view credential) {
  nlohmann::json event = {{"event", "net.denied"}, {"protocol", "https"}, {"host", host},     {"port", port},
                          {"method", method},      {"path", path},         {"reason", reason}, {"rule", rule}};
  if (!credential.empty()) event["credential"] = credential;
  sink.emit(event);
}

void emit_credential_used(EventSink& sink, std::string_view host, uint16_t port, std::string_view method,
                          std::string_view path, std::string_view credential) {
  sink.emit({{"event", "net.credential"}, {"host", host}, {"port", port}, {"method", method}, {"path", path},
             {"credential", credential}});
}

void emit_secret_withheld(EventSink& sink, std::string_view host, uint16_t port, std::string_view credential) {
  sink.emit({{"event", "net.secret_withheld"}, {"host", host}, {"port", port}, {"credential", credential}});
}

void emit_allowed(EventSink& sink, std::string_view protocol, std::string_view host, uint16_t port,
                  std::string_view rule, std::string_view address) {
  sink.emit({{"event", "net.allowed"}, {"protocol", protocol}, {"host", host}, {"port", port},
             {"rule", rule}, {"address", address}});
}

void emit_closed(EventSink& sink, std::string_view host, uint16_t port, uint64_t bytes_up, uint64_t bytes_down,
                 uint64_t duration_ms, std::string_view reason) {
  nlohmann::json event = {{"event", "net.closed"}, {"host", host}, {"port", port}, {"bytes_up", bytes_up},
                          {"bytes_down", bytes_down}, {"duration_ms", duration_ms}};
  if (!reason.empty()) event["reason"] = reason;
  sink.emit(event);
}

void emit_ask(EventSink& sink, uint64_t id, std::string_view host, uint16_t port) {
  sink.emit({{"event", "net.ask"}, {"id", id}, {"host", host}, {"port", port}});
}

void emit_error(EventSink& sink, std::string_view host, uint16_t port, std::string_view reason) {
  sink.emit({{"event", "net.error"}, {"host", host}, {"port", port}, {"reason", reason}});
}

}  // namespace oishell::relay
