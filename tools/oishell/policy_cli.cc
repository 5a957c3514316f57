// Policy argument handling for the authoring verbs: see policy_cli.h.
#include "tools/oishell/policy_cli.h"

#include <cstdio>
#include <cstring>

#include "policy/compiler.h"

namespace oishell::cli {

std::vector<completion::Option> policy_verb_options(std::vector<completion::Option> switches) {
  std::vector<completion::Option> options = {{{"--profile", "-p"}, completion::Value::profile, "NAME",
                                              "a built-in profile (also written profile:NAME)", {}, true}};
  for (auto& s : switches) options.push_back(std::move(s));
  return options;
}

std::optional<std::vector<PolicyArg>> parse_policy_args(int argc, char** argv,
                                                        const std::vector<completion::Option>& options,
                                                        std::vector<std::string>& seen, const char* usage,
                                                        bool* help,
                                                        std::vector<std::pair<std::string, std::string>>* values) {
  const completion::Option* profile = completion::find_option(options, "--profile");
  std::vector<PolicyArg> out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s", usage);
      if (help) *help = true;
      return std::nullopt;
    }
    const completion::Option* option = completion::find_option(options, arg);
    if (option && option == profile) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "oishell %s: --profile needs a name\n%s", argv[0], usage);
        return std::nullopt;
      }
      out.push_back(PolicyArg{{"", argv[++i]}});
    } else if (profile && arg.starts_with("--profile=")) {
      out.push_back(PolicyArg{{"", arg.substr(10)}});
    } else if (arg.starts_with("profile:")) {
      out.push_back(PolicyArg{{"", arg.substr(8)}});
    } else if (option && !option->takes_value()) {
      seen.push_back(option->names.front());
    } else if (option && values) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "oishell %s: %s needs %s\n%s", argv[0], arg.c_str(), option->arg.c_str(), usage);
        return std::nullopt;
      }
      values->emplace_back(option->names.front(), argv[++i]);
    } else if (const size_t eq = arg.find('='); values && arg.starts_with("--") && eq != std::string::npos &&
                                                 completion::find_option(options, arg.substr(0, eq)) &&
                                                 completion::find_option(options, arg.substr(0, eq))->takes_value()) {
      values->emplace_back(completion::find_option(options, arg.substr(0, eq))->names.front(), arg.substr(eq + 1));
    } else if (arg.starts_with("-") && arg != "-") {
      std::fprintf(stderr, "oishell %s: unknown option `%s`\n%s", argv[0], arg.c_str(), usage);
      return std::nullopt;
    } else {
      out.push_back(PolicyArg{{arg == "-" ? "/dev/stdin" : arg, ""}});
    }
  }
  return out;
}

std::optional<policy::Policy> load_or_report(const PolicyArg& arg, const char* verb) {
  policy::LoadResult loaded = policy::load_policy(arg.source);
  if (!loaded.ok()) {
    std::fprintf(stderr, "oishell %s: %s is invalid:\n%s\n", verb, arg.label().c_str(),
                 policy::format_diagnostics(loaded.errors).c_str());
    return std::nullopt;
  }
  return std::move(loaded.policy);
}

std::optional<SandboxSpec> compile_or_report(const PolicyArg& arg, const char* verb) {
  auto policy = load_or_report(arg, verb);
  if (!policy) return std::nullopt;
  auto spec = policy::compile(*policy, CompileContext::from_process());
  if (!spec) {
    std::fprintf(stderr, "oishell %s: %s does not compile here:\n%s\n", verb, arg.label().c_str(),
                 spec.status().message().c_str());
    return std::nullopt;
  }
  return std::move(spec).value();
}

}  // namespace oishell::cli
