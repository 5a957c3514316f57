#pragma once
// What the TLS terminator (https_terminator.h) answers the sandbox itself, in place of an upstream's response: a JSON
// error body ("error" first, then what names the refusal: host, method, path, rule, reason) in an HTTP/1.1 response
// that closes the connection. Pure functions; the caller redacts the body first.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace oishell::relay {

// A JSON object from (key, value) pairs, in the order given: "error" first, as the sandbox's tools expect to read.
std::string terminator_error_json(std::initializer_list<std::pair<std::string_view, std::string_view>> fields);

// An HTTP/1.1 response with the JSON `text` as its body and `Connection: close`.
std::string terminator_error_response(int code, std::string_view phrase, const std::string& text);

}  // namespace oishell::relay
