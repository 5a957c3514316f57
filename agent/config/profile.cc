#include "agent/config/profile.h"

#include "agent/sandbox/computer_tool.h"
#include "agent/config/harness_yaml.h"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "agent/host/atomic_file.h"
#include "agent/config/paths.h"
#include "agent/config/profile_builtin.h"
#include "agent/config/profile_keys.h"
#include "agent/config/profile_policy.h"
#include "agent/config/profile_python.h"

namespace oishell::agent {
namespace {

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// "path:line:column" for a node read from text; "path" for one built from a Python profile's settings.
std::string where(const std::string& path, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return path;
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

std::string yaml_error(const std::string& path, const YAML::Exception& e) {
  return path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + ": " + e.msg;
}

// One setting, by its dotted name, whichever style the profile wrote it in.
struct Entry {
  std::string key;
  YAML::Node key_node, value;
};

class Reader {
 public:
  Reader(const std::string& path, Profile* out) : path_(path), out_(out) {}

  // A null value (`api_key:` with nothing after it) leaves the setting unset, as OI's None does.
  template <typename T>
  bool scalar(const YAML::Node& n, const std::string& key, std::optional<T>* dest) {
    if (n.IsNull()) return false;
    if (!n.IsScalar()) return fail(n, key + ": expected a single value");
    T value;
    if (!YAML::convert<T>::decode(n, value)) return fail(n, key + ": `" + n.Scalar() + "` is not a valid value");
    *dest = value;
    return true;
  }
  bool choice(const YAML::Node& n, const std::string& key, std::optional<std::string>* dest,
              std::initializer_list<const char*> allowed) {
    if (!scalar(n, key, dest)) return false;
    std::string list;
    for (const char* a : allowed) {
      if (*dest == a) return true;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    std::string bad = **dest;
    dest->reset();
    return fail(n, key + ": `" + bad + "` is not one of " + list);
  }
  bool strings(const YAML::Node& n, const std::string& key, std::optional<std::vector<std::string>>* dest) {
    if (n.IsNull()) return false;
    if (!n.IsSequence()) return fail(n, key + ": expected a list");
    std::vector<std::string> list;
    for (const auto& item : n) {
      if (!item.IsScalar()) return fail(item, key + ": each entry must be a single value");
      list.push_back(item.Scalar());
    }
    *dest = std::move(list);
    return true;
  }
  bool fail(const YAML::Node& n, const std::string& what) {
    errors_.push_back(where(path_, n) + ": " + what);
    return false;
  }
  void note(const YAML::Node& n, const std::string& what) { out_->notes.push_back(where(path_, n) + ": " + what); }
  void warn(const YAML::Node& n, const std::string& what) { out_->warnings.push_back(where(path_, n) + ": " + what); }
  const std::string& path() const { return path_; }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::string path_;
  Profile* out_;
  std::vector<std::string> errors_;
};

// Both styles into one list: `llm: {model: x}` and `llm.model: x` (and `interpreter.llm.model: x`) are `llm.model`.
void flatten(const YAML::Node& map, const std::string& prefix, Reader& r, std::vector<Entry>* out) {
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) {
      r.fail(kv.first, "a key must be a name");
      continue;
    }
    std::string key = prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar();
    if (key.starts_with("interpreter.")) key = key.substr(std::string_view("interpreter.").size());
    if (is_profile_object(key) && key != "wtf") {
      if (kv.second.IsMap()) flatten(kv.second, key, r, out);
      else if (!kv.second.IsNull()) r.fail(kv.second, key + ": expected a mapping");
      continue;
    }
    out->push_back({key, kv.first, kv.second});
  }
}

void read_languages(const YAML::Node& v, Reader& r, Profile* p) {
  if (!v.IsSequence()) {
    r.fail(v, "computer.languages: expected a list of language names");
    return;
  }
  std::vector<std::string> langs;
  for (const auto& item : v) {
    if (item.IsScalar()) langs.push_back(item.Scalar());
    else if (item.IsMap() && item["name"] && item["name"].IsScalar()) langs.push_back(item["name"].Scalar());
    else r.fail(item, "computer.languages: each entry must be a language name");
  }
  p->languages = langs;
}

// Which names a profile's keys are read by: a profile of an older format version used other names for some (read by
// their new names); one without a version may be either, so only names that are not current keys are renamed.
enum class Format { current, unversioned, older };

// Applies one setting. `llm_instructions` receives llm.custom_instructions (applied when the top level has none).
void apply(const Entry& e, Format format, Reader& r, Profile* p, std::optional<std::string>* llm_instructions) {
  std::string key = e.key;
  const YAML::Node& v = e.value;
  if (format == Format::older || (format == Format::unversioned && !find_profile_key(key))) {
    if (std::string_view renamed = renamed_profile_key(key); !renamed.empty()) {
      r.note(e.key_node, "`" + key + "` is the name before profile version " + std::string(kProfileFormatVersion) +
                             " of `" + std::string(renamed) + "` (applied as that)");
      key = renamed;
    }
  }
  const ProfileKey* known = find_profile_key(key);
  if (!known) {
    std::string suggestion = suggest_profile_key(key);
    r.fail(e.key_node, "unknown key `" + key + "`" + (suggestion.empty() ? "" : "; did you mean `" + suggestion + "`?"));
    return;
  }
  if (known->use == KeyUse::no_effect) {
    r.note(e.key_node, "`" + key + "`: " + std::string(known->note));
    return;
  }
  if (key == "llm.model") r.scalar(v, key, &p->model);
  else if (key == "llm.api_key") r.scalar(v, key, &p->api_key);
  else if (key == "llm.api_base") r.scalar(v, key, &p->api_base);
  else if (key == "llm.api_version") r.scalar(v, key, &p->api_version);
  else if (key == "llm.provider") r.scalar(v, key, &p->provider);
  else if (key == "llm.context_window") r.scalar(v, key, &p->context_window);
  else if (key == "llm.max_tokens") r.scalar(v, key, &p->max_tokens);
  else if (key == "llm.supports_functions") r.scalar(v, key, &p->supports_functions);
  else if (key == "llm.supports_vision") r.scalar(v, key, &p->supports_vision);
  else if (key == "llm.temperature") r.scalar(v, key, &p->temperature);
  else if (key == "llm.max_budget" || key == "max_budget") r.scalar(v, key, &p->max_budget);
  else if (key == "llm.max_output" || key == "max_output") r.scalar(v, key, &p->max_output);
  else if (key == "llm.custom_instructions") r.scalar(v, key, llm_instructions);
  else if (key == "auto_run") r.scalar(v, key, &p->auto_run);
  else if (key == "offline") r.scalar(v, key, &p->offline);
  else if (key == "verbose") r.scalar(v, key, &p->verbose);
  else if (key == "debug") r.scalar(v, key, &p->debug);
  else if (key == "custom_instructions") r.scalar(v, key, &p->custom_instructions);
  else if (key == "system_message") r.scalar(v, key, &p->system_message);
  else if (key == "safe_mode") r.choice(v, key, &p->safe_mode, {"off", "ask", "auto"});
  else if (key == "loop") r.scalar(v, key, &p->loop);
  else if (key == "force_task_completion") {
    if (r.scalar(v, key, &p->loop)) r.note(e.key_node, "`force_task_completion` is the old name of `loop` (applied)");
  } else if (key == "loop_message") r.scalar(v, key, &p->loop_message);
  else if (key == "loop_breakers") r.strings(v, key, &p->loop_breakers);
  else if (key == "multi_line") r.scalar(v, key, &p->multi_line);
  else if (key == "highlight_active_line") r.scalar(v, key, &p->highlight_active_line);
  else if (key == "plain_text_display") r.scalar(v, key, &p->plain);
  else if (key == "local") r.scalar(v, key, &p->local);
  else if (key == "fast") r.scalar(v, key, &p->fast);
  else if (key == "os") {
    std::optional<bool> os;
    if (r.scalar(v, key, &os) && *os) p->os = true;
  } else if (key == "harness") {
    auto harness = parse_harness(v);
    if (harness) p->harness = std::move(*harness);
    else r.fail(v, harness.status().message());
  } else if (key == "computer.display_size") {
    std::optional<std::string> size;
    if (r.scalar(v, key, &size) && size) {
      if (parse_screen_size(*size)) p->display_size = *size;
      else r.fail(v, "computer.display_size: `" + *size + "` is not WIDTHxHEIGHT (each 64..8192), e.g. 1280x800");
    }
  } else if (key == "user_message_template") r.scalar(v, key, &p->user_message_template);
  else if (key == "always_apply_user_message_template") r.scalar(v, key, &p->always_apply_user_message_template);
  else if (key == "code_output_template") r.scalar(v, key, &p->code_output_template);
  else if (key == "empty_code_output_template") r.scalar(v, key, &p->empty_code_output_template);
  else if (key == "code_output_sender") r.choice(v, key, &p->code_output_sender, {"user", "assistant"});
  else if (key == "version") r.scalar(v, key, &p->version);
  else if (key == "computer.languages") read_languages(v, r, p);
  else if (key == "max_turns") r.scalar(v, key, &p->max_turns);
  else if (key == "sandbox") r.choice(v, key, &p->sandbox, {"openshell", "none"});
  else if (key == "policy") {
    p->policy.reset();  // one or the other
    p->policy_text.reset();
    if (v.IsMap()) {
      std::vector<ProfilePolicyError> errors;
      p->policy_text = inline_policy_text(v, r.path(), &errors);
      for (const auto& error : errors) r.fail(error.node, error.message);
    } else if (r.scalar(v, key, &p->policy) && p->policy->empty()) {
      r.fail(v, "policy: empty");
    }
  } else {
    r.fail(e.key_node, "`" + key + "` is listed as applied but not read (a bug in agent/config/profile.cc)");
  }
}

// The profile's format version, before the keys are read (older formats used other names for some keys).
Format format_of(const YAML::Node& root) {
  for (const auto& kv : root) {
    if (kv.first.IsScalar() && kv.first.Scalar() == "version" && kv.second.IsScalar()) {
      bool ok = false;
      return compare_versions(kv.second.Scalar(), kProfileFormatVersion, &ok) < 0 && ok ? Format::older
                                                                                         : Format::current;
    }
  }
  return Format::unversioned;
}

void check_version(const std::string& path, Profile* p, std::vector<std::string>* errors) {
  if (!p->version) return;
  const std::string current(kProfileFormatVersion);
  bool ok = false;
  int cmp = compare_versions(*p->version, current, &ok);
  if (!ok) {
    errors->push_back(path + ": version: `" + *p->version + "` is not a profile version (Open Interpreter's is " +
                      current + ")");
  } else if (cmp < 0) {
    p->warnings.push_back(
        path + ": this profile is in the format of version " + *p->version + "; Open Interpreter updated its profile "
        "format (now " + current + ") and offers to migrate older profiles. Its settings were read with the old names "
        "mapped to the new ones (model -> llm.model, local -> offline, ...). To migrate it, rename those keys and set "
        "`version: " + current + "` (or `interpreter --reset_profile` for a built-in one).");
  } else if (cmp > 0) {
    p->warnings.push_back(path + ": profile format version " + *p->version + " is newer than " + current +
                          ", the one this agent knows; its settings were checked against " + current + "'s keys");
  }
}

Result<Profile> read_root(const YAML::Node& root, const std::string& path, Format format) {
  Profile p;
  p.path = path;
  if (root.IsNull()) return p;
  if (!root.IsMap()) return Status::error(path + ": a profile must be a YAML mapping of settings");
  Reader r(path, &p);
  std::optional<std::string> llm_instructions;
  try {
    std::vector<Entry> entries;
    flatten(root, "", r, &entries);
    for (const auto& e : entries) apply(e, format, r, &p, &llm_instructions);
  } catch (const YAML::Exception& e) {
    return Status::error(yaml_error(path, e));
  }
  if (llm_instructions && !p.custom_instructions) p.custom_instructions = llm_instructions;
  std::vector<std::string> errors = r.errors();
  check_version(path, &p, &errors);
  if (!errors.empty()) {
    std::string msg;
    for (const auto& e : errors) msg += (msg.empty() ? "" : "\n") + e;
    return Status::error(msg);
  }
  if (p.max_output && *p.max_output <= 0) return Status::error(path + ": max_output must be positive");
  if (p.context_window && *p.context_window <= 0) return Status::error(path + ": llm.context_window must be positive");
  if (p.max_budget && !(*p.max_budget > 0)) return Status::error(path + ": max_budget must be a positive amount of USD");
  // A policy that names a file is relative to the profile; a bare word is a built-in policy profile.
  if (p.policy && (p.policy->find('/') != std::string::npos || p.policy->ends_with(".yaml") ||
                   p.policy->ends_with(".yml") || p.policy->ends_with(".json"))) {
    if (p.policy->front() == '~') {
      // left for the caller (needs $HOME)
    } else if (p.policy->front() != '/') {
      auto slash = path.rfind('/');
      std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
      *p.policy = dir + "/" + *p.policy;
    }
  }
  return p;
}

YAML::Node to_yaml(const nlohmann::json& j) {
  if (j.is_null()) return YAML::Node();
  if (j.is_boolean()) return YAML::Node(j.get<bool>());
  if (j.is_number_integer()) return YAML::Node(j.get<long long>());
  if (j.is_number()) return YAML::Node(j.get<double>());
  if (j.is_string()) return YAML::Node(j.get<std::string>());
  YAML::Node n;
  if (j.is_array()) {
    n = YAML::Node(YAML::NodeType::Sequence);
    for (const auto& item : j) n.push_back(to_yaml(item));
  } else {
    n = YAML::Node(YAML::NodeType::Map);
    for (const auto& [k, item] : j.items()) n[k] = to_yaml(item);
  }
  return n;
}

std::string without_extension(const std::string& name) {
  for (const char* ext : {".yaml", ".yml", ".json", ".py"}) {
    if (name.ends_with(ext)) return name.substr(0, name.size() - std::string_view(ext).size());
  }
  return name;
}

}  // namespace

Result<Profile> parse_profile(const std::string& yaml_text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status::error(yaml_error(path, e));
  }
  return read_root(root, path, root.IsMap() ? format_of(root) : Format::current);
}

Result<Profile> profile_from_settings(const nlohmann::json& settings, const std::string& path) {
  if (!settings.is_object()) return Status::error(path + ": the profile's settings are not a mapping");
  // Python profiles are always of the current format (OI gives them its current version).
  return read_root(to_yaml(settings), path, Format::current);
}

namespace {

Result<Profile> profile_from_python(Result<PythonProfileSettings> read, const std::string& path) {
  if (!read) return read.status();
  auto profile = profile_from_settings(read->settings, path);
  if (!profile) return profile;
  profile->notes.insert(profile->notes.end(), read->notes.begin(), read->notes.end());
  return profile;
}

}  // namespace

Result<Profile> profile_from_runner_output(const std::string& output, const std::string& path) {
  return profile_from_python(settings_from_runner_output(output, path), path);
}

Result<Profile> load_profile_file(const std::string& path) {
  if (path.ends_with(".py")) return profile_from_python(read_python_profile_settings(path), path);
  auto text = read_file(path, 1 << 20);
  if (!text) return text.status().with_context("reading profile");
  return parse_profile(*text, path);
}

Result<Profile> load_named_profile(const std::string& name, const EnvLookup& env) {
  if (name.find('/') != std::string::npos || is_file(name)) {
    if (is_file(name)) return load_profile_file(name);
    return Status::error("profile `" + name + "` not found");
  }
  std::string dir = profiles_dir(env);
  for (const char* ext : {"", ".yaml", ".yml", ".json", ".py"}) {
    std::string candidate = dir + "/" + name + ext;
    if (is_file(candidate)) return load_profile_file(candidate);
  }
  std::string base = without_extension(name);
  if (auto text = builtin_profile(base)) return parse_profile(std::string(*text), "built-in profile `" + base + "`");
  std::string names;
  for (const auto& n : builtin_profile_names()) names += (names.empty() ? "" : ", ") + std::string(n);
  return Status::error("profile `" + name + "` not found in " + dir + " (built-in profiles: " + names + ")");
}

std::optional<std::string> default_profile_path(const EnvLookup& env) {
  std::string p = profiles_dir(env) + "/default.yaml";
  if (is_file(p)) return p;
  return std::nullopt;
}

}  // namespace oishell::agent
