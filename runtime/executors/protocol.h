#pragma once
// The supervisor protocol (docs/protocol.md): JSON lines, requests with an "op" in, events with an "event" out.
// Pure parsing and building; no I/O.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

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
  // `timeout_ms`: this block's wall time; the session's (the policy's wall_time) still bounds it.
  std::optional<uint64_t> timeout_ms;
};
// A one-shot command: `argv` run by sandbox init (no executor, no shell unless argv names one), in `cwd` (inside;
// empty = the sandbox's working directory), `stdin` its whole standard input (absent = EOF). Same events as a block.
struct RunRequest {
  std::string id;
  std::vector<std::string> argv;
  std::string cwd;
  std::optional<std::string> stdin_data;
  std::optional<uint64_t> timeout_ms;
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
// A live change of the sandbox's network policy (docs/protocol.md, "Changing the network policy"): a whole network
// section, or a patch of the rules in force, or the policy file read again. Validated and applied by
// SessionOptions::on_policy; answered with `policy.changed` or `policy.rejected` carrying `ref`.
struct PolicyRequest {
  std::string ref;                                   // client-chosen, echoed in the answer ("" when not given)
  std::optional<nlohmann::json> network;             // a whole `network:` mapping
  nlohmann::json allow = nlohmann::json::array();    // patch: rules added to network.allow (strings or objects)
  nlohmann::json deny = nlohmann::json::array();     // patch: rules added to network.deny
  std::vector<std::string> remove;                   // patch: rule texts removed
  std::optional<std::string> on_unlisted;            // patch: "deny" or "ask"
  bool reload = false;                               // the policy file read again
};

using Request = std::variant<ExecRequest, RunRequest, InterruptRequest, InputRequest, ResetRequest, AnswerRequest,
                             ShutdownRequest, PolicyRequest>;

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

// The executor control channel, driver → supervisor (docs/protocol.md, "Executor control channel"). The driver
// shares its process with the block's code, which can find the socket and write to it, so every line is parsed
// strictly and the supervisor keeps no more of it than kMaxControlLine.

// The largest image (decoded) an `I` line may carry. The longest line a driver sends is an `I` line: a base64 PNG of
// a matplotlib figure, tens of KiB at the default size and a few MiB for a large, dense figure at a high dpi.
// 12 MiB is more than that, and more than the image inputs of the models a client passes images on to accept.
inline constexpr size_t kMaxImageBytes = 12u << 20;
// The longest control line the supervisor keeps, without its '\n': the base64 of the largest image (16 MiB) and
// room for the `I <seq> <format> ` before it. Longer lines are dropped as they stream in.
inline constexpr size_t kMaxControlLine = kMaxImageBytes / 3 * 4 + 64;

struct ControlReady {};                 // "R"
struct ControlActiveLine {              // "L <seq> <line>"; line 0 is well formed and never reported
  uint64_t seq = 0;
  int line = 0;
};
struct ControlImage {                   // "I <seq> <png|jpeg> <base64>"
  uint64_t seq = 0;
  std::string_view format;              // a static string from the allowlist
  std::string_view base64;              // into the parsed line: strict base64 of a png or jpeg, <= kMaxImageBytes
};
struct ControlDone {                    // "D <seq> <ok|error|interrupted> <code>"
  uint64_t seq = 0;
  std::string_view status;              // a static string from the allowlist
  int code = 0;                         // a 32-bit integer
};
using ControlMessage = std::variant<ControlReady, ControlActiveLine, ControlImage, ControlDone>;

// Parses one control line (without '\n'). Strict: exactly the fields and single spaces the drivers send, seq and
// numbers in canonical decimal (no sign, no leading zero, in range), a status and an image format from the
// allowlists, base64 with the standard alphabet, padding and zero trailing bits, whose first bytes are the
// format's signature. The error names the rule that failed in fixed words; it never quotes the line.
Result<ControlMessage> parse_control_line(std::string_view line);

// The seq a message is about (0 for "R", which is about none).
uint64_t control_seq(const ControlMessage& message);

}  // namespace oishell::executors
