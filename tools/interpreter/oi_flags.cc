#include "tools/interpreter/oi_flags.h"

#include <algorithm>

#include "base/edit_distance.h"

namespace oishell::interpreter {

const std::vector<FlagSpec>& flag_table() {
  using K = FlagKind;
  static const std::vector<FlagSpec> kTable = {
      // Open Interpreter 0.4.3 (interpreter/terminal_interface/start_terminal_interface.py), in its order.
      {"profile", "p", K::value, true},
      {"custom_instructions", "ci", K::value, true},
      {"system_message", "sm", K::value, true},
      {"auto_run", "y", K::flag, true},
      {"no_highlight_active_line", "nhl", K::flag, true},
      {"verbose", "v", K::flag, true},
      {"model", "m", K::value, true},
      {"temperature", "t", K::value, true},
      {"llm_supports_vision", "lsv", K::negatable, true},
      {"llm_supports_functions", "lsf", K::negatable, true},
      {"context_window", "cw", K::value, true},
      {"max_tokens", "x", K::value, true},
      {"max_budget", "b", K::value, true},
      {"api_base", "ab", K::value, true},
      {"api_key", "ak", K::value, true},
      {"api_version", "av", K::value, true},
      {"max_output", "xo", K::value, true},
      {"loop", "", K::flag, true},
      {"disable_telemetry", "dt", K::flag, true},
      {"offline", "o", K::flag, true},
      {"speak_messages", "sp", K::flag, true},
      {"safe_mode", "safe", K::value, true},
      {"debug", "debug", K::flag, true},
      {"fast", "f", K::flag, true},
      {"multi_line", "ml", K::flag, true},
      {"local", "l", K::flag, true},
      {"codestral", "", K::flag, true},
      {"assistant", "", K::flag, true},
      {"llama3", "", K::flag, true},
      {"groq", "", K::flag, true},
      {"vision", "vi", K::flag, true},
      {"os", "os", K::flag, true},
      {"reset_profile", "", K::optional_value, true},
      {"profiles", "", K::flag, true},
      {"local_models", "", K::flag, true},
      {"conversations", "", K::flag, true},
      {"server", "", K::flag, true},
      {"version", "", K::flag, true},
      {"contribute_conversation", "", K::flag, true},
      {"plain", "pl", K::flag, true},
      {"stdin", "s", K::flag, true},
      // This agent's own.
      {"help", "h", K::flag, false},
      {"sandbox", "", K::value, false},
      {"policy", "", K::value, false},
      {"json", "", K::flag, false},
      {"acp", "", K::flag, false},
      {"embed", "", K::flag, false},
      {"gui", "", K::flag, false},
      {"kubernetes", "", K::optional_value, false},
      {"gui_port", "", K::value, false},
      {"gui-port", "", K::value, false},  // the spelling of the issue and of most tools; OI spells with _
      {"provider", "", K::value, false},
      {"max_turns", "", K::value, false},
      {"completion", "", K::value, false},
  };
  return kTable;
}

const FlagSpec* find_flag(std::string_view long_name) {
  for (const auto& f : flag_table()) {
    if (f.name == long_name) return &f;
  }
  return nullptr;
}

namespace {

std::string did_you_mean(std::string_view typed) {
  std::string best;
  size_t best_distance = 3;  // closer than this, or no suggestion
  for (const auto& f : flag_table()) {
    std::vector<std::string> names = {"--" + std::string(f.name)};
    if (!f.nickname.empty()) names.push_back("-" + std::string(f.nickname));
    if (f.kind == FlagKind::negatable) names.push_back("--no-" + std::string(f.name));
    for (const auto& n : names) {
      size_t d = edit_distance(typed, n);
      if (d < best_distance) best_distance = d, best = n;
    }
  }
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

bool looks_like_number(std::string_view s) {
  if (s.size() < 2 || s[0] != '-') return false;
  return std::all_of(s.begin() + 1, s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// A long name as typed ("model", "no-llm_supports_vision", "mod"): the flag, and whether it was the --no- form.
Result<std::pair<const FlagSpec*, bool>> match_long(const std::string& name) {
  for (const auto& f : flag_table()) {
    if (f.name == name) return std::make_pair(&f, false);
    if (f.kind == FlagKind::negatable && "no-" + std::string(f.name) == name) return std::make_pair(&f, true);
  }
  // argparse's allow_abbrev: a unique prefix of one long name.
  std::vector<std::pair<const FlagSpec*, bool>> candidates;
  for (const auto& f : flag_table()) {
    if (f.name.starts_with(name)) candidates.emplace_back(&f, false);
    if (f.kind == FlagKind::negatable && ("no-" + std::string(f.name)).starts_with(name)) {
      candidates.emplace_back(&f, true);
    }
  }
  if (candidates.size() == 1 && name.size() >= 2) return candidates.front();
  if (candidates.size() > 1) {
    std::string list;
    for (const auto& [f, negated] : candidates) {
      list += (list.empty() ? "" : ", ") + std::string(negated ? "--no-" : "--") + std::string(f->name);
    }
    return Status::error("ambiguous option --" + name + ": could be " + list);
  }
  return Status::error("unknown option --" + name + did_you_mean("--" + name));
}

}  // namespace

Result<NormalizedArgs> normalize_args(const std::vector<std::string>& argv) {
  NormalizedArgs out;
  // OI's `i` shortcut: when the first argument is a word, every argument is a word of the first message.
  if (!argv.empty() && !argv[0].empty() && argv[0][0] != '-') {
    out.words_first = true;
    out.args = argv;
    return out;
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--") {
      out.args.insert(out.args.end(), argv.begin() + static_cast<long>(i), argv.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-' || looks_like_number(arg)) {
      out.args.push_back(arg);
      continue;
    }
    const FlagSpec* flag = nullptr;
    bool negated = false;
    std::optional<std::string> attached;  // the value written into the same argument
    if (arg.starts_with("--")) {
      std::string name = arg.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        attached = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      if (name == "debug_mode") {  // OI renamed it; it says so too
        out.notes.push_back("--debug_mode has been renamed to --verbose");
        name = "verbose";
      }
      auto matched = match_long(name);
      if (!matched) return matched.status();
      flag = matched->first;
      negated = matched->second;
    } else {
      std::string name = arg.substr(1);
      if (auto eq = name.find('='); eq != std::string::npos) {
        attached = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      for (const auto& f : flag_table()) {
        if (!f.nickname.empty() && f.nickname == name) flag = &f;
      }
      if (!flag && !attached) {
        // -mgpt-4o: a one-letter nickname that takes a value, with the value joined to it (as argparse reads it).
        for (const auto& f : flag_table()) {
          if (f.nickname.size() == 1 && f.nickname[0] == name[0] && f.kind == FlagKind::value) {
            flag = &f;
            attached = name.substr(1);
          }
        }
      }
      if (!flag) {
        return Status::error("unknown option " + arg + did_you_mean(arg) +
                             "; short options are never combined (write -y -v, not -yv)");
      }
    }
    const std::string canonical = (negated ? "--no-" : "--") + std::string(flag->name);
    switch (flag->kind) {
      case FlagKind::flag:
      case FlagKind::negatable:
        if (attached) return Status::error(arg + ": " + canonical + " takes no value");
        out.args.push_back(canonical);
        break;
      case FlagKind::value:
        if (attached) {
          out.args.push_back(canonical + "=" + *attached);
        } else if (i + 1 < argv.size()) {
          out.args.push_back(canonical);
          out.args.push_back(argv[++i]);
        } else {
          return Status::error(arg + ": " + canonical + " needs a value");
        }
        break;
      case FlagKind::optional_value:
        if (!attached && i + 1 < argv.size() && !argv[i + 1].starts_with("-")) attached = argv[++i];
        out.args.push_back(attached ? canonical + "=" + *attached : canonical);
        break;
    }
  }
  return out;
}

}  // namespace oishell::interpreter
