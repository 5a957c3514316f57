#pragma once
// The server's token: generated at start (or the user's INTERPRETER_API_KEY, Open Interpreter's name for it),
// required on every request, compared in constant time.
#include <string>
#include <string_view>

#include "agent/server/http.h"

namespace oishell::agent::server {

// 32 random bytes (getrandom), hex: 256 bits.
std::string generate_token();
// Compares without an early exit on the first difference (the time depends on the lengths only).
bool tokens_equal(std::string_view a, std::string_view b);
// The credential a request carries: `X-API-KEY: T` (OI's header) or `Authorization: Bearer T` (what OpenAI SDKs
// send as the api_key). Empty when neither is present.
std::string request_token(const HttpRequest& request);

}  // namespace oishell::agent::server
