#include "agent/core/code_extract.h"

#include <algorithm>
#include <optional>

#include "agent/core/code_fence.h"
#include "agent/core/json_util.h"
#include "agent/core/partial_json.h"
#include "base/markdown_fence.h"

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

// Keys whose value a reader of a call could take for the code to run or for its language: the ones code_from_json
// reads, and the names other tools give code.
bool code_like_key(const std::string& key) {
  static const char* const kKeys[] = {"code",     "language", "arguments", "parameters", "input",
                                      "function", "command",  "cmd",       "script",     "source"};
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; });
}

// Deeper than this, a value is not searched (the search recurses; the model chooses the depth) but refused.
constexpr int kMaxSearchDepth = 32;

// What `v` holds that looks like another call: "another `code`" for the first code-like key of an object anywhere
// inside it (arrays and objects, at any depth); empty when none.
std::string nested_code(const json& v, int depth = 0) {
  if (!v.is_object() && !v.is_array()) return {};
  if (depth >= kMaxSearchDepth) return "values nested more than " + std::to_string(kMaxSearchDepth) + " levels deep";
  for (const auto& [k, inner] : v.items()) {
    if (v.is_object() && code_like_key(k)) return "another `" + k + "`";
    if (std::string found = nested_code(inner, depth + 1); !found.empty()) return found;
  }
  return {};
}

// The problem with a key of the call other than the ones read: it holds something that looks like another call.
std::string stray_code(const json& j, std::initializer_list<const char*> read) {
  for (const auto& [k, v] : j.items()) {
    if (std::any_of(read.begin(), read.end(), [&k = k](const char* r) { return k == r; })) continue;
    if (std::string inner = nested_code(v); !inner.empty()) {
      return "its `" + k + "` holds " + inner + ", so it is unclear which code is meant";
    }
  }
  return {};
}

// {"language":..,"code":..}, {"name":"execute","arguments":{..}|"..."}, {"function":{"name":..,"arguments":..}}.
// A call that could be read as two different ones (a second `code` nested under another key, two wrappers) sets
// *problem instead: it is refused, not guessed at.
std::optional<Code> code_from_json(const json& j, std::string* problem, int wrappers = 0) {
  if (!j.is_object()) return std::nullopt;
  if (j.contains("code") && j["code"].is_string()) {
    if (j.contains("language") && !j["language"].is_string()) {
      *problem = "its `language` is not a string";
      return std::nullopt;
    }
    if (std::string p = stray_code(j, {"code", "language"}); !p.empty()) {
      *problem = p;
      return std::nullopt;
    }
    Code c{j.contains("language") ? j["language"].get<std::string>() : "", j["code"].get<std::string>()};
    return c;
  }
  const char* wrapper = nullptr;
  for (const char* w : {"arguments", "parameters", "input", "function"}) {
    if (!j.contains(w)) continue;
    if (wrapper) {
      *problem = std::string("it has both `") + wrapper + "` and `" + w + "`";
      return std::nullopt;
    }
    wrapper = w;
  }
  if (!wrapper) return std::nullopt;
  if (wrappers >= 2) {  // a call inside a call inside a call: no model writes that by mistake
    *problem = "it wraps the call in `" + std::string(wrapper) + "` more than twice";
    return std::nullopt;
  }
  if (std::string p = stray_code(j, {wrapper, "name", "type", "id"}); !p.empty()) {
    *problem = p;
    return std::nullopt;
  }
  const json& args = j[wrapper];
  if (std::string_view(wrapper) == "function" && !args.is_object()) return std::nullopt;
  if (args.is_string()) {
    CallArguments parsed = parse_call_arguments(args.get<std::string>());
    if (!parsed.problem.empty()) {
      *problem = parsed.problem;
      return std::nullopt;
    }
    return parsed.value ? code_from_json(*parsed.value, problem, wrappers + 1) : std::nullopt;
  }
  return code_from_json(args, problem, wrappers + 1);
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

// language="python", code='''...''' (any order; a repeated name is a problem, as in JSON)
std::optional<Code> code_from_kwargs(std::string_view s, std::string* problem) {
  Code c;
  bool has_code = false, has_language = false;
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
    if ((name == "language" && has_language) || (name == "code" && has_code)) {
      *problem = "the argument `" + name + "` appears twice";
      return std::nullopt;
    }
    if (name == "language") {
      c.language = *value;
      has_language = true;
    }
    if (name == "code") {
      c.code = *value;
      has_code = true;
    }
  }
  while (p < s.size() && (std::isspace(static_cast<unsigned char>(s[p])) || s[p] == ',')) ++p;
  if (p < s.size()) return std::nullopt;  // more than the arguments (a second call, prose): not a call
  if (!has_code) return std::nullopt;
  return c;
}

// The whole answer, when it is nothing but one block (a ``` fence around all of it): the block's text and tag.
std::string unwrap_single_fence(const std::string& text, std::string* tag) {
  std::string t = trim(text);
  tag->clear();
  if (t.rfind("```", 0) != 0) return t;
  std::string inner = t;
  *tag = strip_code_fences(&inner);
  if (inner.find("```") != std::string::npos) return t;  // more than one block: leave it whole
  return trim(inner);
}

// A call written as text, found only when it is the whole answer (maybe inside one fence): an answer that holds
// anything else is shown and read as prose and blocks, so a call in its prose never runs instead of the block shown.
struct TextCall {
  std::optional<Code> code;
  std::string problem;  // set: a call, refused
};

// The whole answer as a tool call printed as JSON.
TextCall json_text_call(const std::string& text) {
  TextCall out;
  std::string tag;
  std::string t = unwrap_single_fence(text, &tag);
  if (!tag.empty() && tag != "json") return out;
  if (t.empty() || t.front() != '{' || t.back() != '}') return out;
  CallArguments j = parse_call_arguments(t);
  if (!j.problem.empty()) {
    out.problem = j.problem;
    return out;
  }
  if (j.value) out.code = code_from_json(*j.value, &out.problem);
  return out;
}

// The whole answer as `functions.execute(...)`.
TextCall functions_execute_call(const std::string& text) {
  TextCall out;
  std::string tag;
  std::string t = unwrap_single_fence(text, &tag);
  constexpr std::string_view kCall = "functions.execute";
  if (t.rfind(kCall, 0) != 0 || t.back() != ')') return out;
  std::string inner = trim(std::string_view(t).substr(kCall.size()));
  if (inner.empty() || inner.front() != '(') return out;
  inner = trim(std::string_view(inner).substr(1, inner.size() - 2));
  if (!inner.empty() && inner.front() == '{') {
    CallArguments j = parse_call_arguments(inner);
    if (!j.problem.empty()) {
      out.problem = j.problem;
      return out;
    }
    if (j.value) out.code = code_from_json(*j.value, &out.problem);
  } else {
    out.code = code_from_kwargs(inner, &out.problem);
  }
  return out;
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
    // agent/core/code_fence.h: the rule the display splits the streaming answer by.
    std::optional<std::string> opens = in_code ? std::nullopt : opening_fence(line);
    if (opens) {
      flush_prose();
      in_code = true;
      tag = lower(*opens);
      code.clear();
    } else if (in_code && closing_fence(line)) {
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
    // A language the executors know whose interpreter this machine lacks (ruby, R, java are offered, not required).
    const bool known = m.format == "javascript" || m.format == "ruby" || m.format == "r" || m.format == "java";
    part->problem = (known ? "`" + m.format + "` is not installed on this machine (its interpreter is not on the "
                             "sandbox's PATH)"
                           : "Unknown language `" + m.format + "`") +
                    ": nothing was run. The languages available are: " + list + ".";
  }
}

// What the model is told about a call refused because it could be read two ways.
std::string refused_call_problem(const std::string& tool, const std::string& why) {
  return "The call of `" + tool + "` was refused and nothing was run: " + why +
         ". What runs must be exactly what the user is shown, so call it again with plain JSON arguments "
         "{\"language\": ..., \"code\": ...}, each key once and nothing else holding code.";
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
      // One parse of the arguments decides what is shown at the question and what runs (agent/core/partial_json.h).
      std::optional<Code> code;
      std::string refused;
      CallArguments j = parse_call_arguments(call.arguments);
      if (!j.problem.empty()) {
        refused = j.problem;
      } else if (j.value) {
        code = code_from_json(*j.value, &refused);
        if (j.repaired) out.repairs.push_back("repaired broken JSON in the tool call's arguments");
      }
      if (!refused.empty()) {
        part.message.format = "json";
        part.message.content = call.arguments;
        part.problem = refused_call_problem(call.name, refused);
        out.parts.push_back(std::move(part));
        continue;
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
  // A tool call written as text (JSON, or `functions.execute(...)`): repaired only when it is the whole answer.
  for (auto [find, what] : {std::pair{&json_text_call, "a tool call written as JSON text"},
                            std::pair{&functions_execute_call, "`functions.execute(...)` written as text"}}) {
    TextCall call = find(response.text);
    if (!call.problem.empty()) {
      AnswerPart part{Message::code("json", trim(response.text)), refused_call_problem("execute", call.problem)};
      out.parts.push_back(std::move(part));
      return out;
    }
    if (!call.code) continue;
    out.repairs.push_back(std::string(what) + " was run as code");
    AnswerPart part{Message::code(call.code->language, call.code->code), ""};
    check_code(&part, languages, &out.repairs);
    out.parts.push_back(std::move(part));
    return out;
  }
  // Fenced blocks.
  for (AnswerPart& part : split_fenced(response.text)) {
    if (part.message.type == "code") {
      if (display_only(part.message.format)) {
        const std::string fence = fence_for(part.message.content);
        part.message = Message::assistant(fence + part.message.format + "\n" + part.message.content + "\n" + fence);
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
