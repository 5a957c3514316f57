#pragma once
// The conversation as Open Interpreter keeps it: a list of messages, each with a role (user, assistant, computer),
// a type (message, code, console, image), a format (the language of code, "output" of console output, "base64.png"
// of an image) and content. This is also the shape of the stream printed by `--json` and of saved conversations.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace oishell::agent {

struct Message {
  std::string role;     // "user" | "assistant" | "computer"
  std::string type;     // "message" | "code" | "console" | "image"
  std::string format;   // code: language; console: "output"; image: "base64.png"
  std::string content;
  std::string call_id;  // code requested through a tool call (and the console answering it): the call's id

  static Message user(std::string text) { return {"user", "message", "", std::move(text), ""}; }
  static Message assistant(std::string text) { return {"assistant", "message", "", std::move(text), ""}; }
  static Message code(std::string language, std::string code, std::string call_id = {}) {
    return {"assistant", "code", std::move(language), std::move(code), std::move(call_id)};
  }
  static Message console(std::string output, std::string call_id = {}) {
    return {"computer", "console", "output", std::move(output), std::move(call_id)};
  }
  bool operator==(const Message&) const = default;
};

nlohmann::json to_json(const Message& m);
// Missing keys become empty strings; a non-object or a non-string field is an error (message in *error).
bool from_json(const nlohmann::json& j, Message* out, std::string* error);

}  // namespace oishell::agent
