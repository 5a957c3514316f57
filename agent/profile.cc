#include "agent/profile.h"

#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "agent/atomic_file.h"
#include "agent/paths.h"

namespace oishell::agent {
namespace {

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Keys of Open Interpreter profiles that have no meaning here: accepted with a warning.
bool known_but_unused(const std::string& key) {
  static const char* const kKeys[] = {
      "safe_mode", "disable_telemetry", "loop", "loop_message", "loop_breakers", "os", "speak_messages",
      "multi_line", "contribute_conversation", "import_computer_api", "shrink_images", "in_terminal_interface",
      "conversation_history", "conversation_filename", "conversation_history_path", "anonymous_telemetry",
      "llm.execution_instructions", "llm.vision_renderer", "llm.supports_vision", "llm.api_version", "llm.fast",
      "computer.import_computer_api", "computer.import_skills", "computer.run", "computer.system_message",
      "computer.verbose", "computer.offline", "computer.emit_images", "computer.max_output", "messages",
      "interpreter.computer.import_computer_api", "highlight_active_line", "display_markdown", "force_task_completion",
      "sync_computer", "skills", "server"};
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; });
}

std::string where(const std::string& path, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

class Reader {
 public:
  Reader(const std::string& path, Profile* out) : path_(path), out_(out) {}

  template <typename T>
  bool scalar(const YAML::Node& n, const std::string& key, std::optional<T>* dest) {
    if (!n.IsScalar()) return fail(n, key + ": expected a single value");
    T value;
    if (!YAML::convert<T>::decode(n, value)) return fail(n, key + ": `" + n.Scalar() + "` is not a valid value");
    *dest = value;
    return true;
  }
  bool fail(const YAML::Node& n, const std::string& what) {
    errors_.push_back(where(path_, n) + ": " + what);
    return false;
  }
  void unknown(const YAML::Node& key_node, const std::string& key) {
    if (known_but_unused(key)) {
      out_->warnings.push_back(where(path_, key_node) + ": `" + key + "` is an Open Interpreter setting this agent "
                               "does not use (ignored)");
    } else {
      fail(key_node, "unknown key `" + key + "`");
    }
  }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::string path_;
  Profile* out_;
  std::vector<std::string> errors_;
};

void read_llm(const YAML::Node& llm, Reader& r, Profile* p) {
  if (!llm.IsMap()) {
    r.fail(llm, "llm: expected a mapping");
    return;
  }
  for (const auto& kv : llm) {
    std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "model") r.scalar(v, "llm.model", &p->model);
    else if (key == "api_key") r.scalar(v, "llm.api_key", &p->api_key);
    else if (key == "api_base") r.scalar(v, "llm.api_base", &p->api_base);
    else if (key == "provider") r.scalar(v, "llm.provider", &p->provider);
    else if (key == "context_window") r.scalar(v, "llm.context_window", &p->context_window);
    else if (key == "max_tokens") r.scalar(v, "llm.max_tokens", &p->max_tokens);
    else if (key == "supports_functions") r.scalar(v, "llm.supports_functions", &p->supports_functions);
    else if (key == "temperature") r.scalar(v, "llm.temperature", &p->temperature);
    else r.unknown(kv.first, "llm." + key);
  }
}

void read_computer(const YAML::Node& computer, Reader& r, Profile* p) {
  if (!computer.IsMap()) {
    r.fail(computer, "computer: expected a mapping");
    return;
  }
  for (const auto& kv : computer) {
    std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "languages") {
      if (!v.IsSequence()) {
        r.fail(v, "computer.languages: expected a list of language names");
        continue;
      }
      std::vector<std::string> langs;
      for (const auto& item : v) {
        if (item.IsScalar()) langs.push_back(item.Scalar());
        else if (item.IsMap() && item["name"] && item["name"].IsScalar()) langs.push_back(item["name"].Scalar());
        else r.fail(item, "computer.languages: each entry must be a language name");
      }
      p->languages = langs;
    } else {
      r.unknown(kv.first, "computer." + key);
    }
  }
}

}  // namespace

Result<Profile> parse_profile(const std::string& yaml_text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status::error(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                         ": " + e.msg);
  }
  Profile p;
  p.path = path;
  if (root.IsNull()) return p;
  if (!root.IsMap()) return Status::error(path + ": a profile must be a YAML mapping of settings");
  Reader r(path, &p);
  try {
    for (const auto& kv : root) {
      std::string key = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      if (key == "llm") read_llm(v, r, &p);
      else if (key == "computer") read_computer(v, r, &p);
      else if (key == "auto_run") r.scalar(v, key, &p.auto_run);
      else if (key == "offline") r.scalar(v, key, &p.offline);
      else if (key == "verbose") r.scalar(v, key, &p.verbose);
      else if (key == "custom_instructions") r.scalar(v, key, &p.custom_instructions);
      else if (key == "system_message") r.scalar(v, key, &p.system_message);
      else if (key == "max_output") r.scalar(v, key, &p.max_output);
      else if (key == "max_turns") r.scalar(v, key, &p.max_turns);
      else if (key == "version") r.scalar(v, key, &p.version);
      else if (key == "sandbox") {
        if (r.scalar(v, key, &p.sandbox) && *p.sandbox != "openshell" && *p.sandbox != "none") {
          r.fail(v, "sandbox: `" + *p.sandbox + "` is not a sandbox (expected openshell or none)");
        }
      } else if (key == "policy") {
        if (r.scalar(v, key, &p.policy) && p.policy->empty()) r.fail(v, "policy: empty");
      } else {
        r.unknown(kv.first, key);
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::error(path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                         ": " + e.msg);
  }
  if (!r.errors().empty()) {
    std::string msg;
    for (const auto& e : r.errors()) msg += (msg.empty() ? "" : "\n") + e;
    return Status::error(msg);
  }
  if (p.max_output && *p.max_output <= 0) return Status::error(path + ": max_output must be positive");
  if (p.context_window && *p.context_window <= 0) return Status::error(path + ": llm.context_window must be positive");
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

Result<Profile> load_profile_file(const std::string& path) {
  auto text = read_file(path, 1 << 20);
  if (!text) return text.status().with_context("reading profile");
  return parse_profile(*text, path);
}

Result<std::string> find_profile(const std::string& name, const EnvLookup& env) {
  if (name.ends_with(".py")) {
    return Status::error("profile `" + name + "`: Python profiles are not supported; write it as YAML");
  }
  if (name.find('/') != std::string::npos || is_file(name)) {
    if (is_file(name)) return name;
    return Status::error("profile `" + name + "` not found");
  }
  std::string dir = profiles_dir(env);
  for (const char* ext : {"", ".yaml", ".yml"}) {
    std::string candidate = dir + "/" + name + ext;
    if (is_file(candidate)) return candidate;
  }
  return Status::error("profile `" + name + "` not found in " + dir);
}

std::optional<std::string> default_profile_path(const EnvLookup& env) {
  std::string p = profiles_dir(env) + "/default.yaml";
  if (is_file(p)) return p;
  return std::nullopt;
}

}  // namespace oishell::agent
