#include "tools/interpreter/cli.h"

#include <CLI/CLI.hpp>

#include <cstring>
#include <map>

#include "tools/completion/completion.h"
#include "tools/interpreter/oi_flags.h"

namespace oishell::interpreter {
namespace {

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
    if (option.names.empty()) continue;
    if (const FlagSpec* f = find_flag(option.names.front().substr(2)); f && !f->nickname.empty()) {
      option.names.push_back("-" + std::string(f->nickname));
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
  CLI::App app{"interpreter: an Open Interpreter-compatible agent whose code runs in the oishell sandbox\n"
               "Every flag of Open Interpreter 0.4.3 is accepted, long and short (-lsv, -os, -ml ...); short "
               "options are never combined.",
               "interpreter"};
  app.set_help_flag("--help", "show this help (-h)");
  app.allow_extras(false);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // argparse: the last one wins

  bool auto_run = false, lsf = false, no_lsf = false, lsv = false, no_lsv = false;
  bool fast = false, vision = false, os = false, codestral = false, assistant = false, llama3 = false, groq = false;
  std::string model, api_base, api_key, api_version, provider, profile, ci, sm, sandbox, policy, safe_mode, reset;
  std::string kubernetes;
  int cw = 0, x = 0, xo = 0, max_turns = -1;
  double temperature = -1, budget = 0;
  // Long names only: normalize_args() turned every short form into one of these.
  app.add_option("--profile", profile, "-p: a profile name (built-in or in --profiles) or a YAML file");
  app.add_option("--custom_instructions", ci, "-ci: text appended to the system message");
  app.add_option("--system_message", sm, "-sm: replaces the default system message");
  app.add_flag("--auto_run", auto_run, "-y: run code without asking (default with the openshell sandbox)");
  app.add_flag("--no_highlight_active_line", o.no_highlight_active_line, "-nhl: (the active line is never highlighted here)");
  app.add_flag("--verbose", o.verbose, "-v: show more detail");
  app.add_option("--model", model, "-m: the model (gpt-4o, claude-sonnet-4-5, groq/..., ollama/llama3.1, ...)");
  app.add_option("--temperature", temperature, "-t: sampling temperature");
  app.add_flag("--llm_supports_vision", lsv, "-lsv: the model can see images");
  app.add_flag("--no-llm_supports_vision", no_lsv, "images are described in text, not sent");
  app.add_flag("--llm_supports_functions", lsf, "-lsf: the model can call the execute() tool (default)");
  app.add_flag("--no-llm_supports_functions", no_lsf, "the model writes fenced code blocks instead of tool calls");
  app.add_option("--context_window", cw, "-cw: the model's context window in tokens");
  app.add_option("--max_tokens", x, "-x: the most tokens an answer may use");
  app.add_option("--max_budget", budget, "-b: stop when the session's model calls have cost this many USD");
  app.add_option("--api_base", api_base, "-ab: the API base URL (OpenAI-compatible servers, gateways)");
  app.add_option("--api_key", api_key, "-ak: the API key (default: the provider's variable, e.g. OPENAI_API_KEY)");
  app.add_option("--api_version", api_version, "-av: the API version (Azure)");
  app.add_option("--max_output", xo, "-xo: characters of a block's output shown to the model (default 2800)");
  app.add_flag("--loop", o.loop, "keep working until the model says the task is done or cannot be done");
  app.add_flag("--disable_telemetry", o.disable_telemetry, "-dt: (this agent sends no telemetry)");
  app.add_flag("--offline", o.offline, "-o: do not use the network except for the model");
  app.add_flag("--speak_messages", o.speak_messages, "-sp: (macOS `say`; no effect here)");
  app.add_option("--safe_mode", safe_mode, "-safe: off, ask (every block asks first) or auto")
      ->check(CLI::IsMember({"off", "ask", "auto"}));
  app.add_flag("--debug", o.debug, "-debug: OI's developer mode (here: --verbose)");
  app.add_flag("--fast", fast, "-f: the built-in `fast` profile");
  app.add_flag("--multi_line", o.multi_line, "-ml: ``` starts and ends multi-line input");
  app.add_flag("--local", o.local, "-l: use a model server on this machine (Ollama, LM Studio, llama.cpp)");
  app.add_flag("--codestral", codestral, "the built-in `codestral` profile");
  app.add_flag("--assistant", assistant, "the built-in `assistant` profile");
  app.add_flag("--llama3", llama3, "the built-in `llama3` profile");
  app.add_flag("--groq", groq, "the built-in `groq` profile");
  app.add_flag("--vision", vision, "-vi: the built-in `vision` profile");
  app.add_flag("--os", os, "-os: the built-in `os` profile");
  app.add_option("--reset_profile", reset, "reset a built-in profile (all of them without a name) and exit")
      ->expected(0, 1);
  app.add_flag("--profiles", o.profiles, "print the profiles folder and exit");
  app.add_flag("--local_models", o.local_models, "print the local models folder and exit");
  app.add_flag("--conversations", o.conversations, "list saved conversations (this agent's and Open Interpreter's) "
                                                   "and resume one");
  app.add_flag("--server", o.server, "serve the agent on loopback: OI's websocket protocol and an OpenAI-compatible "
                                     "endpoint");
  app.add_flag("--acp", o.acp, "speak the Agent Client Protocol on stdin/stdout, for editors (Zed, VS Code, "
                               "JetBrains): docs/interpreter.md");
  app.add_flag("--embed", o.embed, "speak JSON lines on stdin/stdout to the program that started this one (the "
                                   "Python package `interpreter`): docs/python.md");
  app.add_flag("--gui", o.gui, "also show the session in a local web page (loopback only, behind a token): "
                               "docs/interpreter.md");
  app.add_option("--kubernetes", kubernetes, "run the sandbox as a pod of a Kubernetes cluster: "
                                             "[CONTEXT/NAMESPACE/TEMPLATE] (deploy/kubernetes/README.md)")
      ->expected(0, 1);
  app.add_option("--gui-port,--gui_port", o.gui_port, "the web page's port (default: a free one)")
      ->check(CLI::Range(0, 65535));
  app.add_flag("--version", o.version, "print the version and exit");
  app.add_flag("--contribute_conversation", o.contribute_conversation, "(conversations are never sent anywhere)");
  app.add_flag("--plain", o.plain, "-pl: no colours or styling (for pipes)");
  app.add_flag("--stdin", o.stdin_prompt, "-s: read the prompt from standard input, run it and exit");
  app.add_option("--sandbox", sandbox, "openshell (default) or none (code runs on the host; asks before each block)")
      ->check(CLI::IsMember({"openshell", "none"}));
  app.add_option("--policy", policy, "a sandbox policy file or built-in policy profile");
  app.add_flag("--json", o.json, "print the message stream as JSON lines");
  std::vector<std::string> providers;  // the provider table's names (its prefixes without the slash)
  for (const auto& row : agent::provider_table()) {
    if (row.strip && row.prefix.ends_with('/')) providers.emplace_back(row.prefix.substr(0, row.prefix.size() - 1));
  }
  app.add_option("--provider", provider, "the provider (default: from the model name's provider/ prefix)")
      ->check(CLI::IsMember(providers));
  app.add_option("--max_turns", max_turns, "stop after this many model turns per message");
  app.add_option("prompt", o.prompt, "a prompt to run (then exit); `i <words>` starts a chat with them instead");
  std::string completion_shell;
  app.add_option("--completion", completion_shell, "print the completion script for the shell and exit")
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));

  std::vector<std::string> raw;
  for (int i = 1; i < argc; ++i) raw.emplace_back(argv[i]);
  auto normalized = normalize_args(raw);
  if (!normalized) return normalized.status();
  std::string program = argc > 0 ? argv[0] : "interpreter";
  if (auto slash = program.rfind('/'); slash != std::string::npos) program = program.substr(slash + 1);
  if (normalized->words_first) {  // OI's `i <words>`: a chat that starts with the words
    o.prompt = normalized->args;
    o.prompt_then_chat = true;
    o.invoked_as_i = program == "i";
    return o;
  }
  o.notes = normalized->notes;
  std::vector<std::string> args(normalized->args.rbegin(), normalized->args.rend());  // CLI11 wants them reversed
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
  if (given("--api_version")) o.api_version = api_version;
  if (given("--provider")) o.provider = provider;
  if (given("--temperature")) o.temperature = temperature;
  if (given("--context_window")) o.context_window = cw;
  if (given("--max_tokens")) o.max_tokens = x;
  if (given("--max_budget")) o.max_budget = budget;
  if (given("--max_output")) o.max_output = xo;
  if (given("--max_turns")) o.max_turns = max_turns;
  if (given("--safe_mode")) o.safe_mode = safe_mode;
  if (given("--reset_profile")) o.reset_profile = reset;
  if (given("--kubernetes")) o.kubernetes = kubernetes;
  if (lsf && no_lsf) return Status::error("--llm_supports_functions and --no-llm_supports_functions contradict");
  if (lsf) o.supports_functions = true;
  if (no_lsf) o.supports_functions = false;
  if (lsv && no_lsv) return Status::error("--llm_supports_vision and --no-llm_supports_vision contradict");
  if (lsv) o.supports_vision = true;
  if (no_lsv) o.supports_vision = false;
  if (given("--profile")) o.profile = profile;
  if (given("--custom_instructions")) o.custom_instructions = ci;
  if (given("--system_message")) o.system_message = sm;
  if (given("--sandbox")) o.sandbox = sandbox;
  if (given("--policy")) o.policy = policy;

  // OI's profile shortcuts, in OI's order (a later one wins; --local with --vision or --os picks the local variant).
  auto shortcut = [&o](std::string name) { o.profile = std::move(name); };
  if (fast) shortcut("fast");
  if (vision) shortcut("vision");
  if (os) shortcut("os");
  if (o.local && (vision || os)) shortcut(os ? "local-os" : "local-vision");
  if (codestral) shortcut(vision ? "codestral-vision" : os ? "codestral-os" : "codestral");
  if (assistant) shortcut("assistant");
  if (llama3) shortcut(vision ? "llama3-vision" : os ? "llama3-os" : "llama3");
  if (groq) shortcut("groq");

  if (o.disable_telemetry) o.notes.push_back("--disable_telemetry: this agent sends no telemetry (nothing to disable)");
  if (o.contribute_conversation) {
    o.notes.push_back("--contribute_conversation: this agent never sends conversations anywhere (ignored)");
  }
  if (o.speak_messages) o.notes.push_back("--speak_messages: macOS's `say` is not used here (ignored)");
  if (o.safe_mode == "auto") {
    o.notes.push_back("--safe_mode auto: no code scanner runs here; the sandbox confines every block, and each "
                      "block asks before it runs");
  }
  if (o.no_highlight_active_line) {
    o.notes.push_back("--no_highlight_active_line: the running line is not highlighted here anyway");
  }
  return o;
}

}  // namespace oishell::interpreter
