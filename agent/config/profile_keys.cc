#include "agent/config/profile_keys.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

#include "base/edit_distance.h"

namespace oishell::agent {
namespace {

constexpr std::string_view kNoComputerApi = "Open Interpreter's Computer API is not available here (no effect)";

constexpr ProfileKey kKeys[] = {
    // The language model (interpreter.llm).
    {"llm.model", KeyUse::applied, ""},
    {"llm.temperature", KeyUse::applied, ""},
    {"llm.context_window", KeyUse::applied, ""},
    {"llm.max_tokens", KeyUse::applied, ""},
    {"llm.max_output", KeyUse::applied, ""},
    {"llm.max_budget", KeyUse::applied, ""},
    {"llm.api_base", KeyUse::applied, ""},
    {"llm.api_key", KeyUse::applied, ""},
    {"llm.api_version", KeyUse::applied, ""},
    {"llm.provider", KeyUse::applied, ""},
    {"llm.supports_functions", KeyUse::applied, ""},
    {"llm.supports_vision", KeyUse::applied, ""},
    {"llm.custom_instructions", KeyUse::applied, ""},
    {"llm.execution_instructions", KeyUse::no_effect,
     "this agent writes its own instructions for fenced code blocks (no effect)"},
    {"llm.vision_renderer", KeyUse::no_effect, "images are sent to the model or left out, never described (no effect)"},
    {"llm.fast", KeyUse::no_effect, "no effect here (use `fast: true` or --fast)"},
    // The session (interpreter).
    {"auto_run", KeyUse::applied, ""},
    {"offline", KeyUse::applied, ""},
    {"verbose", KeyUse::applied, ""},
    {"debug", KeyUse::applied, ""},
    {"custom_instructions", KeyUse::applied, ""},
    {"system_message", KeyUse::applied, ""},
    {"max_output", KeyUse::applied, ""},
    {"max_budget", KeyUse::applied, ""},
    {"safe_mode", KeyUse::applied, ""},
    {"loop", KeyUse::applied, ""},
    {"loop_message", KeyUse::applied, ""},
    {"loop_breakers", KeyUse::applied, ""},
    {"force_task_completion", KeyUse::applied, ""},  // loop's old name
    {"multi_line", KeyUse::applied, ""},
    {"highlight_active_line", KeyUse::applied, ""},
    {"plain_text_display", KeyUse::applied, ""},
    {"local", KeyUse::applied, ""},
    {"fast", KeyUse::applied, ""},
    {"os", KeyUse::applied, ""},  // computer use on a virtual display inside the sandbox
    {"user_message_template", KeyUse::applied, ""},
    {"always_apply_user_message_template", KeyUse::applied, ""},
    {"code_output_template", KeyUse::applied, ""},
    {"empty_code_output_template", KeyUse::applied, ""},
    {"code_output_sender", KeyUse::applied, ""},
    {"version", KeyUse::applied, ""},
    {"computer.languages", KeyUse::applied, ""},
    {"computer.display_size", KeyUse::applied, ""},
    {"harness", KeyUse::applied, ""},  // ours: another agent's prompting and tools (agent/config/harness.h)
    // Ours: the sandbox.
    {"sandbox", KeyUse::applied, ""},
    {"policy", KeyUse::applied, ""},
    {"max_turns", KeyUse::applied, ""},
    // Accepted, without effect here.
    {"speak_messages", KeyUse::no_effect, "macOS's `say` is not used here (no effect)"},
    {"disable_telemetry", KeyUse::no_effect, "this agent sends no telemetry (nothing to disable)"},
    {"anonymous_telemetry", KeyUse::no_effect, "this agent sends no telemetry (no effect)"},
    {"anonymized_telemetry", KeyUse::no_effect, "this agent sends no telemetry (no effect)"},
    {"contribute_conversation", KeyUse::no_effect, "conversations are never sent anywhere (no effect)"},
    {"messages", KeyUse::no_effect, "a profile does not load a conversation here; use %load_message or --conversations"},
    {"in_terminal_interface", KeyUse::no_effect, "Open Interpreter sets this itself (no effect)"},
    {"conversation_history", KeyUse::no_effect, "conversations are always saved here (no effect)"},
    {"conversation_filename", KeyUse::no_effect, "conversation files are named by the agent (no effect)"},
    {"conversation_history_path", KeyUse::no_effect,
     "conversations are saved in Open Interpreter's conversations folder (no effect)"},
    {"shrink_images", KeyUse::no_effect, "no effect here"},
    {"display_markdown", KeyUse::no_effect, "no effect here (--plain turns styling off)"},
    {"server", KeyUse::no_effect, "no effect in a profile (use --server)"},
    {"sync_computer", KeyUse::no_effect, kNoComputerApi},
    {"import_computer_api", KeyUse::no_effect, kNoComputerApi},
    {"import_skills", KeyUse::no_effect, kNoComputerApi},
    {"skills_path", KeyUse::no_effect, kNoComputerApi},
    {"skills", KeyUse::no_effect, kNoComputerApi},
    {"computer.import_computer_api", KeyUse::no_effect, kNoComputerApi},
    {"computer.import_skills", KeyUse::no_effect, kNoComputerApi},
    {"computer.skills.path", KeyUse::no_effect, kNoComputerApi},
    {"computer.save_skills", KeyUse::no_effect, kNoComputerApi},
    {"computer.system_message", KeyUse::no_effect, kNoComputerApi},
    {"computer.api_base", KeyUse::no_effect, kNoComputerApi},
    {"computer.emit_images", KeyUse::no_effect, kNoComputerApi},
    {"computer.run", KeyUse::no_effect, kNoComputerApi},
    {"computer.offline", KeyUse::no_effect, "the sandbox's policy decides what the code may reach (no effect)"},
    {"computer.verbose", KeyUse::no_effect, "follows `verbose` here (no effect)"},
    {"computer.debug", KeyUse::no_effect, "follows `debug` here (no effect)"},
    {"computer.max_output", KeyUse::no_effect, "follows `max_output` here (no effect)"},
    {"wtf", KeyUse::no_effect, "the `wtf` command is not part of this agent (no effect)"},
};

constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
    {"model", "llm.model"},
    {"temperature", "llm.temperature"},
    {"llm_supports_vision", "llm.supports_vision"},
    {"function_calling_llm", "llm.supports_functions"},
    {"context_window", "llm.context_window"},
    {"max_tokens", "llm.max_tokens"},
    {"api_base", "llm.api_base"},
    {"api_key", "llm.api_key"},
    {"api_version", "llm.api_version"},
    {"local", "offline"},
};

std::string_view last_part(std::string_view dotted) {
  auto dot = dotted.rfind('.');
  return dot == std::string_view::npos ? dotted : dotted.substr(dot + 1);
}

}  // namespace

std::span<const ProfileKey> profile_keys() { return kKeys; }

const ProfileKey* find_profile_key(std::string_view dotted) {
  for (const auto& k : kKeys) {
    if (k.name == dotted) return &k;
  }
  return nullptr;
}

bool is_profile_object(std::string_view dotted) {
  return dotted == "llm" || dotted == "computer" || dotted == "computer.skills" || dotted == "wtf";
}

std::string_view renamed_profile_key(std::string_view old_name) {
  for (const auto& [from, to] : kRenamed) {
    if (from == old_name) return to;
  }
  return {};
}

std::string suggest_profile_key(std::string_view unknown) {
  // The same last part under another object (`model` at the top level -> `llm.model`) is the likeliest mistake.
  std::string_view tail = last_part(unknown);
  for (const auto& k : kKeys) {
    if (k.name != unknown && last_part(k.name) == tail) return std::string(k.name);
  }
  std::string best;
  size_t best_distance = std::string::npos;
  for (const auto& k : kKeys) {
    // A typo in the last part (`llm.modle`, or `modle` for `llm.model`) counts as much as one in the whole name.
    size_t d = std::min(edit_distance(unknown, k.name), edit_distance(tail, last_part(k.name)));
    if (d < best_distance) {
      best_distance = d;
      best = k.name;
    }
  }
  size_t allowed = std::max<size_t>(2, tail.size() / 3);
  return best_distance <= allowed ? best : std::string();
}

int compare_versions(std::string_view a, std::string_view b, bool* ok) {
  auto parts = [ok](std::string_view v) {
    std::vector<long> out;
    size_t i = 0;
    while (i <= v.size()) {
      size_t dot = v.find('.', i);
      if (dot == std::string_view::npos) dot = v.size();
      std::string_view part = v.substr(i, dot - i);
      if (part.empty() || !std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        *ok = false;
        return out;
      }
      long n = 0;
      if (std::from_chars(part.data(), part.data() + part.size(), n).ec != std::errc()) {
        *ok = false;
        return out;
      }
      out.push_back(n);
      i = dot + 1;
    }
    return out;
  };
  *ok = true;
  std::vector<long> x = parts(a), y = parts(b);
  if (!*ok) return 0;
  size_t n = std::max(x.size(), y.size());
  x.resize(n, 0);
  y.resize(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}

}  // namespace oishell::agent
