#include "agent/config/profile_builtin.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace oishell::agent {
namespace {

// default.yaml: written to the profiles folder on first run and read on every run without -p. No model is chosen
// here (without one, the agent explains how to pick one); everything is documented in comments.
constexpr std::string_view kDefault = R"(### INTERPRETER PROFILE (oishell's Open Interpreter-compatible agent)
# Read on every run without -p/--profile. Remove the "#" before a setting to use it.
# `interpreter --reset_profile default` rewrites this file (the old one is kept as default.yaml.bak).

# The language model
# llm:
#   model: gpt-4o               # or claude-sonnet-4-5, ollama/llama3.1, groq/llama-3.1-70b-versatile, ...
#   temperature: 0
#   api_key: ...                # default: the provider's variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)
#   api_base: ...               # an OpenAI-compatible server (llama.cpp, LM Studio, vLLM, a gateway)
#   api_version: ...            # Azure
#   context_window: 128000
#   max_tokens: 4096
#   supports_functions: true    # false: the model writes fenced code blocks instead of calling execute()
#   supports_vision: true
#   max_budget: 0.50            # USD for the session, from the usage the API reports

# custom_instructions: ""       # appended to the system message
# auto_run: true                # the default with the sandbox; false asks before every block
# safe_mode: "off"              # off, ask (every block asks first) or auto
# max_output: 2800              # characters of a block's output shown to the model
# loop: false                   # keep going until the model says the task is done or impossible
# multi_line: false             # ``` starts and ends multi-line input
# verbose: false
# offline: false

# computer:
#   languages: [python, shell]  # only these languages (of those the sandbox has)

# The sandbox (oishell's own keys)
# sandbox: openshell            # or none: code runs on this host, as you, and every block asks first
# policy: default               # a built-in policy profile (default, strict, offline, python-dev) or a policy file,
#                               # relative to this profile; `oishell profiles` lists them. Or the policy itself,
#                               # e.g. credentials the sandbox never sees (docs/interpreter.md):
# policy:
#   network:
#     allow:
#       - host: api.github.com
#         tls: terminate
#         methods: [GET, HEAD]
#         credentials: [{name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: GITHUB_TOKEN}]
# max_turns: 0                  # the most model turns per message (0: no bound)

# All of Open Interpreter's profile keys load here; those without effect in this agent say so when read.

version: 0.2.5  # Profile format version (do not modify)
)";

constexpr std::string_view kFast = R"(# fast: a small, quick model that answers with code and little talk (OI's `--fast`).
llm:
  model: gpt-4o-mini
  temperature: 0
custom_instructions: >-
  FAST mode: answer with code, not prose. No comments, no explanations, no questions unless you cannot go on.
  Assume what is reasonable. When the task is complete, say 'The task is done.'
version: 0.2.5
)";

constexpr std::string_view kVision = R"(# vision: a model that sees images; works in a loop until the task is done (OI's `--vision`).
loop: true
llm:
  model: gpt-4o
  temperature: 0
  supports_vision: true
  supports_functions: true
  context_window: 110000
  max_tokens: 4096
custom_instructions: >-
  You can see images: an image the user names by path is shown to you, and so are images the code displays
  (matplotlib's plt.show() is sent to you). Write HTML complete in one block, never with placeholders.
version: 0.2.5
)";

constexpr std::string_view kOs = R"(# os: computer use (OI's `--os`), confined: a virtual display inside the sandbox, seen in screenshots and driven with
# the `computer` tool (and python's `computer`), by a vision model working in a loop. The host's screen is never reachable.
os: true
loop: true
llm:
  model: gpt-4o
  supports_vision: true
  supports_functions: true
  context_window: 110000
  max_tokens: 4096
version: 0.2.5
)";

constexpr std::string_view kAssistant = R"(# assistant: a terse executive assistant that acts at once and keeps going until the task is done.
llm:
  model: gpt-4o
  context_window: 100000
  max_tokens: 4096
auto_run: true
loop: true
custom_instructions: >-
  You are an executive assistant. Be brief: one or two sentences. Do not lay out plans; say what you will do, then
  run the code. Prefer Python. Split complex work into several small blocks.
version: 0.2.5
)";

constexpr std::string_view kGroq = R"(# groq: Llama 3.1 70B on Groq (GROQ_API_KEY in the environment).
llm:
  model: groq/llama-3.1-70b-versatile
  supports_functions: false
  supports_vision: false
  context_window: 110000
  max_tokens: 4096
version: 0.2.5
)";

// Harness profiles (agent/config/harness.h): other agents' prompting and tools on this sandbox. Ours, not OI's.
constexpr std::string_view kClaudeCode = R"(# claude-code: Claude Code's prompting and tools (Bash, Read, Write, Edit, MultiEdit, Glob, Grep, LS, TodoWrite),
# carried out in the sandbox: Bash in the persistent shell, the file tools by the python executor.
harness: claude-code
llm:
  model: claude-sonnet-4-5
version: 0.2.5
)";

constexpr std::string_view kSweAgent = R"(# swe-agent: SWE-agent's prompting and tools (bash, str_replace_editor, submit), carried out in the sandbox.
harness: swe-agent
version: 0.2.5
)";

constexpr std::string_view kCodex = R"(# codex: Codex's prompting and tools (shell with an argv, apply_patch, update_plan), carried out in the sandbox.
harness: codex
llm:
  model: gpt-5-codex
version: 0.2.5
)";

// A model served on this machine, in OI's three variants of each (`--local`, `--codestral`, `--llama3`, each also with
// `--vision` and `--os`): the model writes fenced code blocks (small local models rarely call tools well), nothing
// leaves the machine (`offline`), and each variant adds to its model's base what it says below.
struct ServedModel {
  std::string_view model;       // llm.model; "" for a model server found at start (`local: true`)
  std::string_view before_llm;  // top-level keys before `llm:`
  std::string_view llm_limits;  // llm keys after its abilities: Ollama's small context and short answers
  std::string_view after_llm;   // top-level keys after `llm:` (how much of a block's output the model reads)
};

constexpr ServedModel kLocalServer{.model = "", .before_llm = "local: true\noffline: true\n", .llm_limits = "",
                                   .after_llm = ""};
// codestral and llama3 through Ollama (ollama pull codestral / llama3): small context, short output.
constexpr ServedModel kCodestral{.model = "ollama/codestral",
                                 .before_llm = "",
                                 .llm_limits = "  context_window: 7000\n  max_tokens: 1000\n",
                                 .after_llm = "max_output: 600\noffline: true\n"};
constexpr ServedModel kLlama3{.model = "ollama/llama3",
                              .before_llm = "",
                              .llm_limits = "  context_window: 7000\n  max_tokens: 1000\n",
                              .after_llm = "offline: true\n"};

struct ServedVariant {
  std::string_view name;
  std::string_view comment;  // the profile's first lines
  const ServedModel* base;
  bool os = false;                  // `os: true`: computer use on a virtual display inside the sandbox
  bool vision = false;              // llm.supports_vision
  bool asks_about_output = false;   // the output templates below: the model is asked what the output means
};

constexpr std::string_view kAskAboutOutput =
    R"(code_output_template: "The code ran. Its output:\n\"\"\"\n{content}\n\"\"\"\nWhat does it mean, and what should run next (if anything)?"
empty_code_output_template: "The code ran and printed nothing. What should run next (if anything)?"
)";

constexpr ServedVariant kServed[] = {
    {.name = "local",
     .comment = "# local: a model server on this machine (Ollama, LM Studio, llama.cpp, vLLM), found at start (OI's "
                "`--local`).\n# The model writes fenced code blocks (small local models rarely call tools well).\n",
     .base = &kLocalServer, .asks_about_output = true},
    {.name = "local-vision",
     .comment = "# local-vision: a local model server with a vision model (llava, llama3.2-vision, ...).\n",
     .base = &kLocalServer, .vision = true, .asks_about_output = true},
    {.name = "local-os",
     .comment = "# local-os: OI's computer use with a local model, on a virtual display inside the sandbox. Without "
                "tool calls the\n# model drives the screen from python (`computer`), as OI's OS mode does.\n",
     .base = &kLocalServer, .os = true, .vision = true},
    {.name = "codestral",
     .comment = "# codestral: Mistral's Codestral through a local Ollama (`ollama pull codestral`).\n",
     .base = &kCodestral, .asks_about_output = true},
    {.name = "codestral-vision",
     .comment = "# codestral-vision: Codestral through Ollama, with images (the model is told it may receive them).\n",
     .base = &kCodestral, .vision = true},
    {.name = "codestral-os",
     .comment = "# codestral-os: OI's computer use with Codestral, on a virtual display inside the sandbox (python's "
                "`computer`\n# without tool calls).\n",
     .base = &kCodestral, .os = true},
    {.name = "llama3",
     .comment = "# llama3: Meta's Llama 3 through a local Ollama (`ollama pull llama3`).\n",
     .base = &kLlama3, .asks_about_output = true},
    {.name = "llama3-vision",
     .comment = "# llama3-vision: Llama 3 through Ollama, with images.\n",
     .base = &kLlama3, .vision = true},
    {.name = "llama3-os",
     .comment = "# llama3-os: OI's computer use with Llama 3, on a virtual display inside the sandbox (python's "
                "`computer` without\n# tool calls).\n",
     .base = &kLlama3, .os = true},
};

std::string served_profile_text(const ServedVariant& v) {
  const ServedModel& m = *v.base;
  std::string text(v.comment);
  if (v.os) text += "os: true\n";
  text += m.before_llm;
  text += "llm:\n";
  if (!m.model.empty()) text += "  model: " + std::string(m.model) + "\n";
  text += "  supports_functions: false\n";
  if (v.vision) text += "  supports_vision: true\n";
  text += m.llm_limits;
  text += m.after_llm;
  if (v.asks_about_output) text += kAskAboutOutput;
  text += "version: 0.2.5\n";
  return text;
}

// Every built-in profile in the order they are listed: written out above, or (an empty text) one of kServed's.
struct BuiltinEntry {
  std::string_view name;
  std::string_view text;  // empty: made from kServed
};

constexpr BuiltinEntry kProfiles[] = {
    {"default", kDefault},
    {"fast", kFast},
    {"vision", kVision},
    {"os", kOs},
    {"local", {}},
    {"local-vision", {}},
    {"local-os", {}},
    {"codestral", {}},
    {"codestral-vision", {}},
    {"codestral-os", {}},
    {"assistant", kAssistant},
    {"llama3", {}},
    {"llama3-vision", {}},
    {"llama3-os", {}},
    {"groq", kGroq},
    {"claude-code", kClaudeCode},
    {"swe-agent", kSweAgent},
    {"codex", kCodex},
};

constexpr auto kNames = [] {
  std::array<std::string_view, std::size(kProfiles)> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kProfiles[i].name;
  return names;
}();

// Each empty text above is one of kServed's, and each of kServed's is listed above.
constexpr bool listed_once_each() {
  auto served = [](std::string_view name) {
    for (const ServedVariant& v : kServed) {
      if (v.name == name) return true;
    }
    return false;
  };
  size_t made = 0;
  for (const BuiltinEntry& entry : kProfiles) {
    if (!entry.text.empty()) continue;
    if (!served(entry.name)) return false;
    ++made;
  }
  return made == std::size(kServed);
}
static_assert(listed_once_each());

// kServed's texts, made once (callers keep the views).
const std::vector<std::pair<std::string_view, std::string>>& served_profiles() {
  static const std::vector<std::pair<std::string_view, std::string>> texts = [] {
    std::vector<std::pair<std::string_view, std::string>> made;
    for (const ServedVariant& v : kServed) made.emplace_back(v.name, served_profile_text(v));
    return made;
  }();
  return texts;
}

}  // namespace

std::span<const std::string_view> builtin_profile_names() { return kNames; }

std::optional<std::string_view> builtin_profile(std::string_view name) {
  for (const BuiltinEntry& entry : kProfiles) {
    if (entry.name != name) continue;
    if (!entry.text.empty()) return entry.text;
    for (const auto& [served, text] : served_profiles()) {
      if (served == name) return std::string_view(text);
    }
  }
  return std::nullopt;
}

}  // namespace oishell::agent
