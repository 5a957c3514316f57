#include "runtime/executors/protocol.h"

#include <algorithm>
#include <array>
#include <limits>

namespace oishell::executors {
namespace {

using nlohmann::json;

Result<std::string> string_field(const json& request, const char* op, const char* key, bool required = true) {
  auto it = request.find(key);
  if (it == request.end()) {
    if (!required) return std::string();
    return Status::error(std::string(op) + ": missing `" + key + "`");
  }
  if (!it->is_string()) return Status::error(std::string(op) + ": `" + key + "` must be a string");
  return it->get<std::string>();
}

// `timeout_ms`, when present: a positive integer.
Result<std::optional<uint64_t>> timeout_field(const json& request, const char* op) {
  auto it = request.find("timeout_ms");
  if (it == request.end()) return std::optional<uint64_t>();
  if (!it->is_number_unsigned() || it->get<uint64_t>() == 0)
    return Status::error(std::string(op) + ": `timeout_ms` must be a positive integer");
  return std::optional<uint64_t>(it->get<uint64_t>());
}

// What exec and run both take: `stdin` (the whole input; absent = EOF) and `timeout_ms`.
Status stdin_and_timeout(const json& request, const char* op, std::optional<std::string>* stdin_data,
                         std::optional<uint64_t>* timeout_ms) {
  if (request.contains("stdin")) {
    auto data = string_field(request, op, "stdin");
    if (!data) return data.status();
    *stdin_data = std::move(*data);
  }
  auto timeout = timeout_field(request, op);
  if (!timeout) return timeout.status();
  *timeout_ms = *timeout;
  return Status::ok();
}

Result<std::string> id_field(const json& request, const char* op) {
  auto it = request.find("id");
  if (it != request.end() && it->is_number_integer()) return it->dump();  // be lenient: 1 and "1" are the same id
  auto id = string_field(request, op, "id");
  if (id && id->empty()) return Status::error(std::string(op) + ": `id` must not be empty");
  return id;
}

// Splits `line` into exactly N fields separated by single spaces; nullopt for any other shape (an empty field, a
// leading, trailing or doubled space, too few or too many fields).
template <size_t N>
std::optional<std::array<std::string_view, N>> split_fields(std::string_view line) {
  std::array<std::string_view, N> fields;
  for (size_t i = 0; i < N; ++i) {
    size_t sp = i + 1 < N ? line.find(' ') : std::string_view::npos;
    if (i + 1 < N && sp == std::string_view::npos) return std::nullopt;
    fields[i] = line.substr(0, sp);
    if (fields[i].empty()) return std::nullopt;
    line.remove_prefix(i + 1 < N ? sp + 1 : line.size());
  }
  if (fields[N - 1].find(' ') != std::string_view::npos) return std::nullopt;
  return fields;
}

// Canonical unsigned decimal: digits only, no leading zero (but "0"), at most `max`.
std::optional<uint64_t> parse_decimal(std::string_view text, uint64_t max) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (max - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// Canonical signed decimal in the 32-bit range: an optional '-' (never "-0"), then parse_decimal.
std::optional<int> parse_int32(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int>::max());
  auto magnitude = parse_decimal(text, negative ? kMax + 1 : kMax);
  if (!magnitude || (negative && *magnitude == 0)) return std::nullopt;
  return static_cast<int>(negative ? -static_cast<int64_t>(*magnitude) : static_cast<int64_t>(*magnitude));
}

// The value of each base64 character, -1 for the other bytes (a table: an image line is megabytes long).
constexpr std::array<int8_t, 256> kBase64Values = [] {
  std::array<int8_t, 256> values{};
  values.fill(-1);
  constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < alphabet.size(); ++i) values[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
  return values;
}();

int base64_value(char c) { return kBase64Values[static_cast<unsigned char>(c)]; }

// Strict base64 (RFC 4648 section 4, what Python's base64.b64encode writes): whole quartets, the standard
// alphabet, '=' only as the last one or two characters, and zero bits after the last byte (so each byte string
// has exactly one encoding). Returns the decoded size.
std::optional<size_t> strict_base64_size(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  const size_t pad = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  int8_t any_invalid = 0;  // no branch per character: image lines are megabytes long
  for (size_t i = 0; i < text.size() - pad; ++i) any_invalid |= kBase64Values[static_cast<unsigned char>(text[i])];
  if (any_invalid < 0) return std::nullopt;
  const int last = base64_value(text[text.size() - pad - 1]);
  if ((pad == 2 && (last & 0x0F) != 0) || (pad == 1 && (last & 0x03) != 0)) return std::nullopt;
  return text.size() / 4 * 3 - pad;
}

// Decodes the first bytes of strict base64 text (at most 3 * 4 = 12 bytes are asked for).
std::string base64_prefix(std::string_view text, size_t bytes) {
  std::string out;
  for (size_t i = 0; i + 4 <= text.size() && out.size() < bytes; i += 4) {
    uint32_t quartet = 0;
    int chars = 0;
    for (size_t j = 0; j < 4; ++j) {
      int v = base64_value(text[i + j]);
      if (v < 0) break;
      quartet |= static_cast<uint32_t>(v) << (18 - 6 * j);
      ++chars;
    }
    for (int k = 0; k < chars - 1; ++k) out.push_back(static_cast<char>((quartet >> (16 - 8 * k)) & 0xFF));
  }
  return out.substr(0, bytes);
}

struct ImageFormat {
  std::string_view name;
  std::string_view signature;
};
// What the drivers send (python: png) and the other common raster format; anything else is refused, so a client
// never gets a format it would render as markup (svg, html).
constexpr std::array<ImageFormat, 2> kImageFormats = {{
    {"png", std::string_view("\x89PNG\r\n\x1a\n", 8)},
    {"jpeg", std::string_view("\xFF\xD8\xFF", 3)},
}};
constexpr std::array<std::string_view, 3> kDoneStatuses = {"ok", "error", "interrupted"};
// A seq is the supervisor's block counter; nothing runs 2^53 blocks, and the bound keeps it exact in JSON.
constexpr uint64_t kMaxSeq = (uint64_t{1} << 53) - 1;

Result<ControlMessage> parse_image(std::string_view line) {
  auto fields = split_fields<4>(line);
  if (!fields) return Status::error("I: not `I <seq> <format> <base64>`");
  auto seq = parse_decimal((*fields)[1], kMaxSeq);
  if (!seq) return Status::error("I: seq is not a decimal number in range");
  const ImageFormat* format = nullptr;
  for (const auto& f : kImageFormats) {
    if (f.name == (*fields)[2]) format = &f;
  }
  if (!format) return Status::error("I: format is not png or jpeg");
  const std::string_view data = (*fields)[3];
  auto size = strict_base64_size(data);
  if (!size) return Status::error("I: data is not strict base64");
  if (*size > kMaxImageBytes) return Status::error("I: image larger than 12 MiB");
  if (!base64_prefix(data, format->signature.size()).starts_with(format->signature))
    return Status::error("I: data does not start with the format's signature");
  return ControlMessage(ControlImage{*seq, format->name, data});
}

}  // namespace

Result<ControlMessage> parse_control_line(std::string_view line) {
  if (line == "R") return ControlMessage(ControlReady{});
  switch (line.empty() || (line.size() > 1 && line[1] != ' ') ? '\0' : line[0]) {
    case 'L': {
      auto fields = split_fields<3>(line);
      if (!fields) return Status::error("L: not `L <seq> <line>`");
      auto seq = parse_decimal((*fields)[1], kMaxSeq);
      if (!seq) return Status::error("L: seq is not a decimal number in range");
      auto number = parse_decimal((*fields)[2], static_cast<uint64_t>(std::numeric_limits<int>::max()));
      if (!number) return Status::error("L: line is not a decimal number in range");
      return ControlMessage(ControlActiveLine{*seq, static_cast<int>(*number)});
    }
    case 'I':
      return parse_image(line);
    case 'D': {
      auto fields = split_fields<4>(line);
      if (!fields) return Status::error("D: not `D <seq> <status> <code>`");
      auto seq = parse_decimal((*fields)[1], kMaxSeq);
      if (!seq) return Status::error("D: seq is not a decimal number in range");
      std::string_view status;
      for (auto s : kDoneStatuses) {
        if (s == (*fields)[2]) status = s;
      }
      if (status.empty()) return Status::error("D: status is not ok, error or interrupted");
      auto code = parse_int32((*fields)[3]);
      if (!code) return Status::error("D: code is not a decimal integer in the 32-bit range");
      return ControlMessage(ControlDone{*seq, status, *code});
    }
    default:
      return Status::error("not one of the R, L, I, D lines");
  }
}

uint64_t control_seq(const ControlMessage& message) {
  if (const auto* line = std::get_if<ControlActiveLine>(&message)) return line->seq;
  if (const auto* image = std::get_if<ControlImage>(&message)) return image->seq;
  if (const auto* done = std::get_if<ControlDone>(&message)) return done->seq;
  return 0;
}

namespace {

// `policy`: exactly one of `network`, a patch (`allow`, `deny`, `remove`, `on_unlisted`) or `reload`.
Result<Request> parse_policy_request(const json& request) {
  static const std::vector<std::string> kKeys = {"op",     "ref",    "network",     "allow",
                                                 "deny",   "remove", "on_unlisted", "reload"};
  for (const auto& [key, value] : request.items()) {
    if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
      return Status::error("policy: unknown field `" + key +
                           "` (network, allow, deny, remove, on_unlisted, reload, ref)");
    }
  }
  PolicyRequest out;
  auto ref = string_field(request, "policy", "ref", /*required=*/false);
  if (!ref) return ref.status();
  out.ref = *ref;
  int kinds = 0;
  if (auto it = request.find("network"); it != request.end()) {
    if (!it->is_object()) return Status::error("policy: `network` must be an object (the policy's network section)");
    out.network = *it;
    ++kinds;
  }
  bool patch = false;
  for (const char* key : {"allow", "deny"}) {
    if (auto it = request.find(key); it != request.end()) {
      if (!it->is_array()) return Status::error(std::string("policy: `") + key + "` must be an array of rules");
      (std::string(key) == "allow" ? out.allow : out.deny) = *it;
      patch = true;
    }
  }
  if (auto it = request.find("remove"); it != request.end()) {
    if (!it->is_array()) return Status::error("policy: `remove` must be an array of rule texts");
    for (const auto& text : *it) {
      if (!text.is_string()) return Status::error("policy: `remove` must be an array of rule texts");
      out.remove.push_back(text.get<std::string>());
    }
    patch = true;
  }
  if (request.contains("on_unlisted")) {
    auto value = string_field(request, "policy", "on_unlisted");
    if (!value) return value.status();
    out.on_unlisted = *value;
    patch = true;
  }
  if (patch) ++kinds;
  if (auto it = request.find("reload"); it != request.end()) {
    if (!it->is_boolean()) return Status::error("policy: `reload` must be true or false");
    out.reload = it->get<bool>();
    if (out.reload) ++kinds;
  }
  if (kinds != 1) {
    return Status::error("policy: give exactly one of `network` (a whole network section), a patch (`allow`, `deny`, "
                         "`remove`, `on_unlisted`) or `reload: true`");
  }
  return Request(std::move(out));
}

}  // namespace

Result<Request> parse_request(std::string_view line) {
  json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) return Status::error("request is not valid JSON");
  if (!request.is_object()) return Status::error("request must be a JSON object");
  auto op_it = request.find("op");
  if (op_it == request.end() || !op_it->is_string()) return Status::error("request has no string `op`");
  const std::string op = op_it->get<std::string>();

  if (op == "exec") {
    ExecRequest exec;
    auto id = id_field(request, "exec");
    if (!id) return id.status();
    exec.id = *id;
    auto language = string_field(request, "exec", "language");
    if (!language) return language.status();
    exec.language = *language;
    auto code = string_field(request, "exec", "code");
    if (!code) return code.status();
    exec.code = *code;
    OI_TRY(stdin_and_timeout(request, "exec", &exec.stdin_data, &exec.timeout_ms));
    return Request(std::move(exec));
  }
  if (op == "run") {
    RunRequest run;
    auto id = id_field(request, "run");
    if (!id) return id.status();
    run.id = *id;
    auto argv = request.find("argv");
    if (argv == request.end() || !argv->is_array() || argv->empty())
      return Status::error("run: `argv` must be a non-empty array of strings");
    for (const auto& arg : *argv) {
      if (!arg.is_string()) return Status::error("run: `argv` must be a non-empty array of strings");
      run.argv.push_back(arg.get<std::string>());
    }
    auto cwd = string_field(request, "run", "cwd", /*required=*/false);
    if (!cwd) return cwd.status();
    run.cwd = *cwd;
    OI_TRY(stdin_and_timeout(request, "run", &run.stdin_data, &run.timeout_ms));
    return Request(std::move(run));
  }
  if (op == "interrupt") {
    auto id = id_field(request, "interrupt");
    if (!id) return id.status();
    return Request(InterruptRequest{*id});
  }
  if (op == "input") {
    InputRequest input;
    auto id = id_field(request, "input");
    if (!id) return id.status();
    input.id = *id;
    auto data = string_field(request, "input", "data", /*required=*/false);
    if (!data) return data.status();
    input.data = *data;
    if (auto it = request.find("eof"); it != request.end()) {
      if (!it->is_boolean()) return Status::error("input: `eof` must be true or false");
      input.eof = it->get<bool>();
    }
    return Request(std::move(input));
  }
  if (op == "reset") {
    auto language = string_field(request, "reset", "language");
    if (!language) return language.status();
    return Request(ResetRequest{*language});
  }
  if (op == "answer") {
    AnswerRequest answer;
    auto it = request.find("ask_id");
    if (it == request.end() || !it->is_number_unsigned())
      return Status::error("answer: `ask_id` must be the number from the `ask` event");
    answer.ask_id = it->get<uint64_t>();
    auto decision = string_field(request, "answer", "decision");
    if (!decision) return decision.status();
    if (*decision == "allow_once") {
      answer.decision = relay::AskAnswer::allow_once;
    } else if (*decision == "allow_always") {
      answer.decision = relay::AskAnswer::allow_always;
    } else if (*decision == "deny") {
      answer.decision = relay::AskAnswer::deny;
    } else {
      return Status::error("answer: `decision` must be allow_once, allow_always or deny, not `" + *decision + "`");
    }
    return Request(answer);
  }
  if (op == "shutdown") return Request(ShutdownRequest{});
  if (op == "policy") return parse_policy_request(request);
  return Status::error("unknown op `" + op + "` (exec, run, interrupt, input, reset, answer, shutdown, policy)");
}

json error_event(std::string_view message, std::string_view id) {
  json event = {{"event", "error"}, {"message", std::string(message)}};
  if (!id.empty()) event["id"] = std::string(id);
  return event;
}

json done_event(std::string_view id, std::string_view status, int exit_code, uint64_t duration_ms,
                std::string_view reason) {
  json event = {{"event", "done"},
                {"id", std::string(id)},
                {"status", std::string(status)},
                {"exit_code", exit_code},
                {"duration_ms", duration_ms}};
  if (!reason.empty()) event["reason"] = std::string(reason);
  return event;
}

json id_value(std::string_view id) { return id.empty() ? json(nullptr) : json(std::string(id)); }

std::string Utf8Carry::take(std::string_view chunk) {
  std::string data = std::move(pending_);
  pending_.clear();
  data.append(chunk);
  // Find the start of the last sequence; keep it if it is incomplete (at most 3 bytes are ever carried).
  size_t n = data.size();
  size_t back = 0;
  while (back < 3 && back < n && (static_cast<unsigned char>(data[n - 1 - back]) & 0xC0) == 0x80) ++back;
  if (back < n) {
    auto lead = static_cast<unsigned char>(data[n - 1 - back]);
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    const bool valid_lead = lead >= 0xC2 && lead <= 0xF4;  // 0xC0, 0xC1, 0xF5.. never start a sequence
    if (valid_lead && need > back + 1) {
      pending_ = data.substr(n - 1 - back);
      data.resize(n - 1 - back);
    }
  }
  return data;
}

std::string Utf8Carry::flush() { return std::exchange(pending_, std::string()); }

std::string to_line(const json& event) {
  std::string line = event.dump(-1, ' ', false, json::error_handler_t::replace);
  line.push_back('\n');
  return line;
}

}  // namespace oishell::executors
