#pragma once
// The supervisor protocol (docs/protocol.md): JSON lines, requests with an "op" in, events with an "event" out.
// Pure parsing and building; no I/O.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "runtime/relay/relay.h"

namespace oishell::executors {

inline constexpr int kProtocolVersion = 1;

struct ExecRequest {
  std::string id;
  std::string language;
  std::string code;
  std::optional<std::string> stdin_data;  // the block's whole stdin; absent = EOF
};
struct InterruptRequest {
  std::string id;
};
struct InputRequest {
  std::string id;
  std::string data;
  bool eof = false;
};
struct ResetRequest {
  std::string language;
};
struct AnswerRequest {
  uint64_t ask_id = 0;
  relay::AskAnswer decision = relay::AskAnswer::deny;
};
struct ShutdownRequest {};

using Request =
    std::variant<ExecRequest, InterruptRequest, InputRequest, ResetRequest, AnswerRequest, ShutdownRequest>;

// Parses one request line. The error message names the field ("exec: `code` must be a string").
Result<Request> parse_request(std::string_view line);

// An `error` event for a request that could not be served; `id` is added when the request had one.
nlohmann::json error_event(std::string_view message, std::string_view id = {});

// `done {id, status, exit_code, duration_ms}`; `reason` is added when not empty.
nlohmann::json done_event(std::string_view id, std::string_view status, int exit_code, uint64_t duration_ms,
                          std::string_view reason = {});

// The block id as a JSON value: a string, or null for output that belongs to no block.
nlohmann::json id_value(std::string_view id);

// Streams of bytes become JSON strings, which must be UTF-8: Utf8Carry keeps an incomplete multi-byte sequence at
// the end of one chunk for the next, so characters split across reads are not mangled. Invalid bytes are replaced
// (U+FFFD) when the event is serialised.
class Utf8Carry {
 public:
  // Returns the complete part of (carried bytes + chunk); keeps a trailing incomplete sequence.
  std::string take(std::string_view chunk);
  // Returns whatever is left (at end of stream).
  std::string flush();

 private:
  std::string pending_;
};

// One JSON line (with '\n'), invalid UTF-8 replaced; never throws.
std::string to_line(const nlohmann::json& event);

}  // namespace oishell::executors
