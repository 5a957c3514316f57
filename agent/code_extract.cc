#include "agent/code_extract.h"

#include <algorithm>
#include <optional>

#include "agent/json_util.h"
#include "agent/partial_json.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Fence tags that show text rather than ask to run it.
bool display_only(const std::string& tag) {
  static const char* const kTags[] = {"text", "txt", "plaintext", "plain", "output", "markdown", "md", "diff",
                                      "csv", "log", "yaml", "yml", "toml", "xml", "ini", "json", "jsonl"};
  return std::any_of(std::begin(kTags), std::end(kTags), [&](const char* t) { return tag == t; });
}

struct Code {
  std::string language;
  std::string code;
};

// {"language":..,"code":..}, {"name":"execute","arguments":{..}|"..."}, {"function":{"name":..,"arguments":..}}
std::optional<Code> code_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  if (j.contains("code") && j["code"].is_string()) {
    Code c{j.contains("language") && j["language"].is_string() ? j["language"].get<std::string>() : "",
           j["code"].get<std::string>()};
    return c;
  }
  const json* args = nullptr;
  if (j.contains("arguments")) args = &j["arguments"];
  else if (j.contains("parameters")) args = &j["parameters"];
  else if (j.contains("input")) args = &j["input"];
  else if (j.contains("function") && j["function"].is_object()) return code_from_json(j["function"]);
  if (!args) return std::nullopt;
  if (args->is_string()) {
    auto parsed = lenient_json_parse(args->get<std::string>());
    return parsed ? code_from_json(*parsed) : std::nullopt;
  }
  return code_from_json(*args);
}

// A Python string literal at s[pos] ('...', "...", '''...''', """...""", optional r prefix); advances pos.
std::optional<std::string> python_string(std::string_view s, size_t* pos) {
  size_t p = *pos;
  bool raw = false;
  if (p < s.size() && (s[p] == 'r' || s[p] == 'R')) {
    raw = true;
    ++p;
  }
  if (p >= s.size() || (s[p] != '"' && s[p] != '\'')) return std::nullopt;
  char q = s[p];
  bool triple = s.substr(p, 3) == std::string(3, q);
  p += triple ? 3 : 1;
  std::string out;
  while (p < s.size()) {
    if (triple ? s.substr(p, 3) == std::string(3, q) : s[p] == q) {
      *pos = p + (triple ? 3 : 1);
      return out;
    }
    if (s[p] == '\\' && !raw && p + 1 < s.size()) {
      char e = s[p + 1];
      out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
      p += 2;
      continue;
    }
    out.push_back(s[p++]);
  }
  return std::nullopt;
}

// language="python", code='''...''' (any order)
std::optional<Code> code_from_kwargs(std::string_view s) {
  Code c;
  bool has_code = false;
  size_t p = 0;
  while (p < s.size()) {
    while (p < s.size() && (std::isspace(static_cast<unsigned char>(s[p])) || s[p] == ',')) ++p;
    size_t name_start = p;
    while (p < s.size() && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_')) ++p;
    std::string name(s.substr(name_start, p - name_start));
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
    if (name.empty() || p >= s.size() || s[p] != '=') break;
    ++p;
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p]))) ++p;
    auto value = python_string(s, &p);
    if (!value) break;
    if (name == "language") c.language = *value;
    if (name == "code") {
      c.code = *value;
      has_code = true;
    }
  }
  if (!has_code) return std::nullopt;
  return c;
}

// The whole of `text` (maybe inside a ```json fence) as a tool call printed as JSON.
std::optional<Code> json_text_call(const std::string& text) {
  std::string t = trim(text);
  if (t.rfind("```", 0) == 0) {
    std::string tag = strip_code_fences(&t);
    if (!tag.empty() && tag != "json") return std::nullopt;
    t = trim(t);
  }
  if (t.empty() || t.front() != '{' || t.back() != '}') return std::nullopt;
  auto j = lenient_json_parse(t);
  if (!j) return std::nullopt;
  return code_from_json(*j);
}

// `functions.execute(...)` anywhere in the text: the call and what precedes it.
std::optional<Code> functions_execute_call(const std::string& text, std::string* before) {
  size_t at = text.find("functions.execute");
  if (at == std::string::npos) return std::nullopt;
  size_t open = text.find('(', at);
  size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  std::string inner = trim(std::string_view(text).substr(open + 1, close - open - 1));
  std::optional<Code> c;
  if (!inner.empty() && inner.front() == '{') {
    if (auto j = lenient_json_parse(inner)) c = code_from_json(*j);
  } else {
    c = code_from_kwargs(inner);
  }
  if (c) *before = trim(std::string_view(text).substr(0, at));
  return c;
}

// Splits text into prose and ``` blocks. An unclosed block runs to the end.
std::vector<AnswerPart> split_fenced(const std::string& text) {
  std::vector<AnswerPart> parts;
  std::string prose, code, tag;
  bool in_code = false;
  auto flush_prose = [&] {
    std::string t = trim(prose);
    if (!t.empty()) parts.push_back({Message::assistant(t), ""});
    prose.clear();
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    std::string stripped = trim(line);
    bool fence = stripped.rfind("```", 0) == 0;
    if (!in_code && fence) {
      flush_prose();
      in_code = true;
      size_t tag_at = stripped.find_first_not_of('`');
      tag = tag_at == std::string::npos ? "" : lower(trim(stripped.substr(tag_at)));
      if (auto sp = tag.find_first_of(" \t{"); sp != std::string::npos) tag = tag.substr(0, sp);
      code.clear();
    } else if (in_code && stripped == "```") {
      parts.push_back({Message::code(tag, code), ""});
      in_code = false;
    } else if (in_code) {
      code += (code.empty() ? "" : "\n") + line;
    } else {
      prose += line;
      if (nl != std::string::npos) prose += "\n";
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  if (in_code) parts.push_back({Message::code(tag, code), ""});
  flush_prose();
  return parts;
}

// Checks a code part: language known, code not empty.
void check_code(AnswerPart* part, const std::vector<std::string>& languages, std::vector<std::string>* repairs) {
  Message& m = part->message;
  std::string fence_tag = strip_code_fences(&m.content);
  if (!fence_tag.empty() || m.content.empty()) {
    if (!fence_tag.empty()) repairs->push_back("removed a ``` fence inside the code");
    if (m.format.empty() && !fence_tag.empty()) m.format = fence_tag;
  }
  m.format = canonical_language(m.format);
  if (trim(m.content).empty()) {
    part->problem = "The code block was empty, so nothing was run.";
    return;
  }
  if (std::find(languages.begin(), languages.end(), m.format) == languages.end()) {
    std::string list;
    for (const auto& l : languages) list += (list.empty() ? "" : ", ") + l;
    part->problem = "Unknown language `" + m.format + "`: nothing was run. The languages available are: " + list + ".";
  }
}

}  // namespace

std::string canonical_language(std::string_view tag) {
  std::string t = lower(trim(tag));
  if (t.empty() || t == "py" || t == "python3" || t == "python" || t == "ipython") return "python";
  if (t == "sh" || t == "bash" || t == "zsh" || t == "shell" || t == "console" || t == "shell-session") return "shell";
  if (t == "js" || t == "node" || t == "nodejs" || t == "javascript") return "javascript";
  if (t == "rb" || t == "ruby") return "ruby";
  if (t == "r" || t == "rscript") return "r";
  if (t == "jshell" || t == "java") return "java";
  if (t == "htm" || t == "html") return "html";
  return t;
}

std::string strip_code_fences(std::string* code) {
  std::string t = trim(*code);
  std::string tag;
  if (t.rfind("```", 0) == 0) {
    size_t nl = t.find('\n');
    tag = lower(trim(t.substr(3, nl == std::string::npos ? std::string::npos : nl - 3)));
    t = nl == std::string::npos ? "" : t.substr(nl + 1);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (t.size() >= 3 && t.compare(t.size() - 3, 3, "```") == 0) t.resize(t.size() - 3);
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (tag.empty()) tag = "python";
    *code = t;
    return tag;
  }
  // A stray backtick (or two) before the code, maybe one after it.
  size_t lead = 0;
  while (lead < t.size() && lead < 2 && t[lead] == '`') ++lead;
  if (lead > 0) {
    t = t.substr(lead);
    if (!t.empty() && t.back() == '`') t.pop_back();
    *code = trim(t);
    return {};
  }
  return {};
}

Extraction extract_answer(const LlmResponse& response, const std::vector<std::string>& languages,
                          const std::optional<ComputerScreen>& computer, const Harness* harness) {
  Extraction out;
  // Tool calls first: the text before them is the message.
  if (!response.tool_calls.empty()) {
    if (!trim(response.text).empty()) out.parts.push_back({Message::assistant(trim(response.text)), ""});
    for (const ToolCall& call : response.tool_calls) {
      AnswerPart part{Message::code("", "", call.id), ""};
      std::string name = call.name;
      if (name.rfind("functions.", 0) == 0) name = name.substr(10);
      if (const HarnessTool* tool = harness ? harness->find(name) : nullptr) {
        part.message.format = tool->name;
        auto arguments = lenient_json_parse(call.arguments.empty() ? "{}" : call.arguments);
        part.message.content = arguments ? dump_json(*arguments) : call.arguments;
        if (!arguments) {
          part.problem = "The call of tool `" + name + "` could not be read (expected JSON arguments); nothing was run.";
        } else if (std::string problem = harness_arguments_problem(*tool, *arguments); !problem.empty()) {
          part.problem = "The call of tool `" + name + "` was not carried out: " + problem + ".";
        }
        out.parts.push_back(std::move(part));
        continue;
      }
      if (name == "computer") {
        part.message.format = kComputerLanguage;
        auto action = lenient_json_parse(call.arguments);
        part.message.content = action ? dump_json(*action) : call.arguments;
        if (!computer) {
          part.problem = "The `computer` tool is not available in this session (the user did not start it with "
                         "--os); nothing was run.";
        } else if (!action) {
          part.problem = "The call of tool `computer` could not be read (expected JSON arguments); nothing was run.";
        } else if (std::string problem = computer_action_problem(*action, *computer); !problem.empty()) {
          part.problem = "The computer action was not carried out: " + problem + ".";
        }
        out.parts.push_back(std::move(part));
        continue;
      }
      if (harness && !harness->execute_tool) {  // this harness's tools only: no repair makes another one run
        std::string names;
        for (const auto& t : harness->tools) names += (names.empty() ? "`" : ", `") + t.name + "`";
        part.message.format = "python";
        part.message.content = call.arguments;
        part.problem = "There is no tool `" + call.name + "` in this session; the tools are " + names +
                       ". Nothing was run.";
        out.parts.push_back(std::move(part));
        continue;
      }
      std::optional<Code> code;
      if (auto j = lenient_json_parse(call.arguments)) {
        code = code_from_json(*j);
        if (!nlohmann::json::accept(call.arguments)) {
          out.repairs.push_back("repaired broken JSON in the tool call's arguments");
        }
      }
      if (!code && (name == "python" || name == "shell" || name == "bash")) {
        code = Code{name, call.arguments};  // the arguments are the code itself
        out.repairs.push_back("tool `" + name + "` called with the code as its arguments");
      }
      if (code && name != "execute" && name != "python" && name != "shell" && name != "bash" && name != "run_code") {
        out.repairs.push_back("tool `" + call.name + "` treated as `execute`");
      }
      if (!code) {
        part.message.format = "python";
        part.message.content = call.arguments;
        part.problem = "The call of tool `" + call.name +
                       "` could not be read (expected execute(language, code) with JSON arguments); nothing was run.";
        out.parts.push_back(std::move(part));
        continue;
      }
      if (code->language.empty() && (name == "shell" || name == "bash")) code->language = "shell";
      part.message.format = code->language;
      part.message.content = code->code;
      check_code(&part, languages, &out.repairs);
      out.parts.push_back(std::move(part));
    }
    return out;
  }
  // A tool call printed as JSON text.
  if (auto code = json_text_call(response.text)) {
    out.repairs.push_back("a tool call written as JSON text was run as code");
    AnswerPart part{Message::code(code->language, code->code), ""};
    check_code(&part, languages, &out.repairs);
    out.parts.push_back(std::move(part));
    return out;
  }
  // functions.execute(...) written as text.
  std::string before;
  if (auto code = functions_execute_call(response.text, &before)) {
    out.repairs.push_back("`functions.execute(...)` written as text was run as code");
    if (!before.empty() && before.find("```") == std::string::npos) {
      out.parts.push_back({Message::assistant(before), ""});
    }
    AnswerPart part{Message::code(code->language, code->code), ""};
    check_code(&part, languages, &out.repairs);
    out.parts.push_back(std::move(part));
    return out;
  }
  // Fenced blocks.
  for (AnswerPart& part : split_fenced(response.text)) {
    if (part.message.type == "code") {
      if (display_only(part.message.format)) {
        part.message = Message::assistant("```" + part.message.format + "\n" + part.message.content + "\n```");
      } else {
        check_code(&part, languages, &out.repairs);
      }
    }
    out.parts.push_back(std::move(part));
  }
  // Merge adjacent prose (display-only blocks between paragraphs).
  std::vector<AnswerPart> merged;
  for (AnswerPart& p : out.parts) {
    if (!merged.empty() && p.message.type == "message" && merged.back().message.type == "message") {
      merged.back().message.content += "\n\n" + p.message.content;
    } else {
      merged.push_back(std::move(p));
    }
  }
  out.parts = std::move(merged);
  return out;
}

}  // namespace oishell::agent
