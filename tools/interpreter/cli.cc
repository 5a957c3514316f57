#include "tools/interpreter/cli.h"

#include <CLI/CLI.hpp>

#include <cstring>
#include <map>

#include "tools/completion/completion.h"

namespace oishell::interpreter {
namespace {

// Open Interpreter's multi-letter short flags (-ab, -cw, ...), which CLI11 reads as bundles of one-letter flags.
const std::map<std::string, std::string>& short_flags() {
  static const std::map<std::string, std::string> kLong = {
      {"-ab", "--api_base"},          {"-ak", "--api_key"},        {"-cw", "--context_window"},
      {"-xo", "--max_output"},        {"-lsf", "--llm_supports_functions"},
      {"-ci", "--custom_instructions"}, {"-sm", "--system_message"}, {"-pl", "--plain"},
      {"-t", "--temperature"}};
  return kLong;
}

std::string expand_short(const std::string& arg) {
  std::string name = arg.substr(0, arg.find('='));
  auto it = short_flags().find(name);
  if (it == short_flags().end()) return arg;
  return it->second + arg.substr(name.size());
}

// The command line for `interpreter --completion SHELL`, read from the CLI11 app that parses it: every option with
// its names (and the short forms expand_short() knows), whether it takes a value, and the choices its IsMember
// check allows ("TEXT:{openai,anthropic,ollama}" in CLI11's type name). Only where a value is a path is said here.
completion::Program completion_program(const CLI::App& app) {
  static const std::map<std::string, completion::Value> kPaths = {
      {"--profile", completion::Value::file}, {"--policy", completion::Value::policy}};
  completion::Program program;
  program.name = "interpreter";
  program.aliases = {"i"};
  program.generator = "interpreter --completion";
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional()) {
      program.operands = {completion::Value::text, o->get_name(true), {}, true};
      continue;
    }
    completion::Option option;
    for (const auto& l : o->get_lnames()) option.names.push_back("--" + l);
    for (const auto& s : o->get_snames()) option.names.push_back("-" + s);
    for (const auto& [short_name, long_name] : short_flags()) {
      if (!option.names.empty() && long_name == option.names.front()) option.names.push_back(short_name);
    }
    option.help = o->get_description();
    option.repeatable = o->get_items_expected_max() > 1;
    if (o->get_items_expected_max() > 0) {
      const std::string type = o->get_type_name();
      option.arg = type.substr(0, type.find(':'));
      if (option.arg == "TEXT" && option.names.front().starts_with("--")) option.arg = option.names.front().substr(2);
      option.value = completion::Value::text;
      if (auto open = type.find(":{"); open != std::string::npos && type.back() == '}') {
        std::string set = type.substr(open + 2, type.size() - open - 3);
        for (size_t start = 0; start <= set.size();) {
          size_t comma = set.find(',', start);
          if (comma == std::string::npos) comma = set.size();
          option.choices.push_back(set.substr(start, comma - start));
          start = comma + 1;
        }
        option.value = completion::Value::choice;
      } else if (auto path = kPaths.find(option.names.front()); path != kPaths.end()) {
        option.value = path->second;
      }
    }
    program.options.push_back(std::move(option));
  }
  return program;
}

}  // namespace

Result<agent::CliOptions> parse_cli(int argc, const char* const* argv, std::string* help_text) {
  agent::CliOptions o;
  CLI::App app{"interpreter: an Open Interpreter-compatible agent whose code runs in the oishell sandbox", "interpreter"};
  app.set_help_flag("-h,--help", "show this help");

  bool auto_run = false, lsf = false, no_lsf = false;
  std::string model, api_base, api_key, provider, profile, ci, sm, sandbox, policy;
  int cw = 0, x = 0, xo = 0, max_turns = -1;
  double temperature = -1;
  app.add_flag("-y,--auto_run", auto_run, "run code without asking (default with the openshell sandbox)");
  app.add_option("-m,--model", model, "the model (gpt-4o, claude-sonnet-4-5, ollama/llama3.1, ...)");
  app.add_option("--api_base", api_base, "-ab: the API base URL (OpenAI-compatible servers, gateways)");
  app.add_option("--api_key", api_key, "-ak: the API key (default: OPENAI_API_KEY / ANTHROPIC_API_KEY)");
  app.add_option("--provider", provider, "openai, anthropic or ollama (default: from the model name)")
      ->check(CLI::IsMember({"openai", "anthropic", "ollama"}));
  app.add_option("--temperature", temperature, "-t: sampling temperature");
  app.add_option("--context_window", cw, "-cw: the model's context window in tokens");
  app.add_option("-x,--max_tokens", x, "the most tokens an answer may use");
  app.add_option("--max_output", xo, "-xo: characters of a block's output shown to the model (default 2800)");
  app.add_flag("--llm_supports_functions", lsf, "-lsf: the model can call the execute() tool (default)");
  app.add_flag("--no-llm_supports_functions", no_lsf, "the model writes fenced code blocks instead of tool calls");
  app.add_option("-p,--profile", profile, "a profile name or YAML file");
  app.add_option("--custom_instructions", ci, "-ci: text appended to the system message");
  app.add_option("--system_message", sm, "-sm: replaces the default system message");
  app.add_flag("-l,--local", o.local, "use a model server on this machine (Ollama, LM Studio, llama.cpp)");
  app.add_flag("-o,--offline", o.offline, "do not use the network except for the model");
  app.add_flag("--plain", o.plain, "-pl: no colours or styling (for pipes)");
  app.add_flag("-s,--stdin", o.stdin_prompt, "read the prompt from standard input, run it and exit");
  app.add_flag("-v,--verbose", o.verbose, "show more detail");
  app.add_flag("--conversations", o.conversations, "list saved conversations and resume one");
  app.add_flag("--version", o.version, "print the version and exit");
  app.add_option("--sandbox", sandbox, "openshell (default) or none (code runs on the host; asks before each block)")
      ->check(CLI::IsMember({"openshell", "none"}));
  app.add_option("--policy", policy, "a sandbox policy file or built-in policy profile");
  app.add_flag("--json", o.json, "print the message stream as JSON lines");
  app.add_option("--max_turns", max_turns, "stop after this many model turns per message");
  app.add_option("prompt", o.prompt, "a prompt to run (then exit)");
  std::string completion_shell;
  app.add_option("--completion", completion_shell, "print the completion script for the shell and exit")
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));

  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.push_back(expand_short(argv[i]));  // CLI11 wants them reversed
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    *help_text = app.help();
    return agent::CliOptions{};
  } catch (const CLI::ParseError& e) {
    return Status::error(e.what());
  }
  auto given = [&app](const char* name) { return app.count(name) > 0; };
  if (given("--completion")) {
    *help_text = completion::render(completion_program(app), *completion::shell_named(completion_shell));
    return agent::CliOptions{};
  }
  if (auto_run) o.auto_run = true;
  if (given("--model")) o.model = model;
  if (given("--api_base")) o.api_base = api_base;
  if (given("--api_key")) o.api_key = api_key;
  if (given("--provider")) o.provider = provider;
  if (given("--temperature")) o.temperature = temperature;
  if (given("--context_window")) o.context_window = cw;
  if (given("--max_tokens")) o.max_tokens = x;
  if (given("--max_output")) o.max_output = xo;
  if (given("--max_turns")) o.max_turns = max_turns;
  if (lsf && no_lsf) return Status::error("--llm_supports_functions and --no-llm_supports_functions contradict");
  if (lsf) o.supports_functions = true;
  if (no_lsf) o.supports_functions = false;
  if (given("--profile")) o.profile = profile;
  if (given("--custom_instructions")) o.custom_instructions = ci;
  if (given("--system_message")) o.system_message = sm;
  if (given("--sandbox")) o.sandbox = sandbox;
  if (given("--policy")) o.policy = policy;
  return o;
}

}  // namespace oishell::interpreter
