#include "runtime/executors/protocol.h"

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

Result<std::string> id_field(const json& request, const char* op) {
  auto it = request.find("id");
  if (it != request.end() && it->is_number_integer()) return it->dump();  // be lenient: 1 and "1" are the same id
  auto id = string_field(request, op, "id");
  if (id && id->empty()) return Status::error(std::string(op) + ": `id` must not be empty");
  return id;
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
    if (request.contains("stdin")) {
      auto data = string_field(request, "exec", "stdin");
      if (!data) return data.status();
      exec.stdin_data = *data;
    }
    return Request(std::move(exec));
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
  return Status::error("unknown op `" + op + "` (exec, interrupt, input, reset, answer, shutdown)");
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
