#pragma once
// A loopback server's token: generated at start (or given by the user: INTERPRETER_API_KEY for `interpreter
// --server`, a token file for `oishell mcp --http`), required on every request, compared in constant time.
#include <string>
#include <string_view>

#include "base/http/http_message.h"

namespace oishell::http {

// 32 random bytes (getrandom), hex: 256 bits.
std::string generate_token();
// Compares without an early exit on the first difference (the time depends on the lengths only).
bool tokens_equal(std::string_view a, std::string_view b);
// The credential a request carries: `X-API-KEY: T` (OI's header) or `Authorization: Bearer T` (what OpenAI SDKs
// send as the api_key). Empty when neither is present.
std::string request_token(const HttpRequest& request);

}  // namespace oishell::http
