// `oishell supervise`: one sandbox for a session, driven through the supervisor protocol (docs/protocol.md):
// JSON-line requests on stdin, JSON-line events on stdout.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/data_dir.h"
#include "policy/compile.h"
#include "policy/live_policy.h"
#include "policy/summary.h"
#include "runtime/executors/event_writer.h"
#include "runtime/executors/host_processes.h"
#include "runtime/executors/language.h"
#include "runtime/executors/protocol.h"
#include "runtime/executors/session.h"
#include "runtime/executors/virtual_display.h"
#include "runtime/outside/sandbox.h"
#include "tools/oishell/command.h"
#include "tools/oishell/live_policy_events.h"
#include "tools/oishell/policy_flags.h"
#include "tools/oishell/session_setup.h"

namespace oishell::cli {
namespace {

constexpr const char* kUsage =
    "usage: oishell supervise [--policy FILE | --profile NAME] [--workspace DIR] [--sandbox openshell|none]\n"
    "                         [--timeout DUR] [--memory SIZE] [--net none|proxy] [--allow-domain D]...\n"
    "                         [--allow-udp HOST:PORT]...\n"
    "                         [--ro PATH]... [--rw PATH]... [--hide PATH]... [--unix PATH]... [--env K=V]...\n"
    "                         [--prestart LANG]... [--display WxH]\n"
    "\n"
    "Starts one sandbox for a session and speaks the supervisor protocol (docs/protocol.md): JSON-line requests\n"
    "on stdin (exec, interrupt, input, reset, answer, policy, shutdown), JSON-line events on stdout (ready, output,\n"
    "active_line, image, done, denied, ask, limit, executor_restarted, error). The policy's wall_time (or\n"
    "--timeout) limits each block. --sandbox none runs the executors on the host without confinement.\n"
    "--prestart LANG starts that executor before the first block (a warm session).\n"
    "--display WxH starts a virtual display of that size inside (Xvfb, and matchbox-window-manager when present):\n"
    "the only screen the executors see (DISPLAY), which the python executor's `computer` drives.\n"
    "Exit status: 0 after shutdown or end of input; 125 the policy is invalid; 126 the sandbox could not be built.\n";

// The options parse() reads (and `oishell completion` offers): the policy flags, the sandbox, warm executors.
const std::vector<completion::Option>& supervise_options() {
  static const std::vector<completion::Option> options = [] {
    std::vector<completion::Option> o = policy_flag_options();
    o.push_back({{"--sandbox"}, completion::Value::choice, "MODE",
                 "openshell (confined, the default) or none (on the host, unconfined)", {"openshell", "none"}});
    std::vector<std::string> languages;
    for (const auto& language : executors::all_languages()) languages.push_back(language.name);
    o.push_back({{"--prestart"}, completion::Value::choice, "LANG", "start this executor before the first block",
                 languages, true});
    o.push_back({{"--display"}, completion::Value::text, "WxH",
                 "a virtual display inside, e.g. 1024x768 (computer use)", {}});
    return o;
  }();
  return options;
}

struct SuperviseArgs {
  PolicySource source;
  PolicyOverrides overrides;
  bool confined = true;
  std::vector<std::string> prestart;
  std::string display;  // --display WxH, checked after --help
};

std::string parse(int argc, char** argv, SuperviseArgs* out, bool* help) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      *help = true;
      return "";
    }
    const completion::Option* option = nullptr;
    std::string value;
    if (std::string error = read_option(argc, argv, &i, supervise_options(), &option, &value); !error.empty()) {
      return error;
    }
    const std::string& flag = option->names.front();
    if (apply_policy_flag(flag, value, &out->source, &out->overrides)) continue;
    if (flag == "--sandbox") {
      if (value != "openshell" && value != "none") return "--sandbox must be openshell or none";
      out->confined = value == "openshell";
    } else if (flag == "--prestart") {
      out->prestart.push_back(value);
    } else if (flag == "--display") {
      out->display = value;
    } else {
      return "unknown option " + flag;  // in supervise_options() but not handled here
    }
  }
  if (!out->source.file.empty() && !out->source.profile.empty()) return "--policy and --profile exclude each other";
  if (!out->display.empty() && !out->confined) return "--display needs the sandbox: with --sandbox none it would be the host's";
  return "";
}

int run_supervise(int argc, char** argv) {
  SuperviseArgs args;
  bool help = false;
  if (std::string error = parse(argc, argv, &args, &help); !error.empty()) {
    std::fprintf(stderr, "oishell supervise: %s\n\n%s", error.c_str(), kUsage);
    return kExitUsage;
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  std::optional<executors::DisplaySize> display_size;
  if (!args.display.empty()) {
    auto size = executors::parse_display_size(args.display);
    if (!size) {
      std::fprintf(stderr, "oishell supervise: --display: %s\n\n%s", size.status().message().c_str(), kUsage);
      return kExitUsage;
    }
    display_size = *size;
  }
  ::signal(SIGPIPE, SIG_IGN);  // a client that goes away is an EPIPE, noticed by the event writer

  // Kept for the session: a `policy` request changes the network part of it live.
  CompileContext context = CompileContext::from_process();
  context.unconfined = !args.confined;  // --sandbox none: the environment and wall time apply, no workspace refusal
  auto loaded = policy::LivePolicy::load(args.source, args.overrides, context);
  if (!loaded.is_ok()) {
    std::fprintf(stderr, "oishell: policy: %s\n", loaded.status().message().c_str());
    return kExitPolicyInvalid;
  }
  policy::LivePolicy live = std::move(loaded.value());
  SessionSetup setup = prepare_session(live.started(), args.confined, args.prestart);
  if (setup.denials) setup.denials->set_policy(live.policy(), live.context());
  const SandboxSpec& spec = setup.spec;
  const uint64_t block_wall_ms = setup.block_wall_ms;
  executors::SessionOptions& options = setup.options;
  executors::EventWriter events(STDOUT_FILENO);
  executors::RuntimeEventForwarder runtime_events(events);
  std::unique_ptr<Sandbox> sandbox;
  if (args.confined) {
    SandboxOptions sandbox_options;
    sandbox_options.ask = [&events](const relay::AskRequest& ask) {
      events.emit({{"event", "ask"}, {"ask_id", ask.id}, {"host", ask.host}, {"port", ask.port}});
    };
    auto created = Sandbox::create(spec, runtime_events, std::move(sandbox_options));
    if (!created.is_ok()) {
      std::fprintf(stderr, "oishell: sandbox could not be built: %s\n", created.status().message().c_str());
      return kExitSandboxFailed;
    }
    sandbox = std::move(created.value());
  } else {
    auto created = executors::HostProcesses::create(spec, runtime_events);
    if (!created.is_ok()) {
      std::fprintf(stderr, "oishell: %s\n", created.status().message().c_str());
      return kExitSandboxFailed;
    }
    sandbox = std::move(created.value());
  }

  // Fails closed: a session asked for a display gets one or does not start.
  std::unique_ptr<executors::VirtualDisplay> display;
  if (!args.display.empty()) {
    auto started = executors::VirtualDisplay::start(*sandbox, spec, *display_size);
    if (!started) {
      std::fprintf(stderr, "oishell: %s\n", started.status().message().c_str());
      sandbox->shutdown();
      return kExitSandboxFailed;
    }
    display = std::move(started.value());
    options.executor.extra_env = display->environment();
  }

  // The answer to a change carries the policy summary as `ready` has it, with the network now in force.
  options.on_policy = [&live, &sandbox, &spec, block_wall_ms](const executors::PolicyRequest& request) {
    nlohmann::json answer = answer_policy_request(live, *sandbox, request);
    if (answer.value("event", "") == "policy.changed") {
      SandboxSpec now = spec;
      now.network = live.current();
      answer["policy"] = policy_summary(now, block_wall_ms);
    }
    return answer;
  };
  auto languages = executors::available_languages(spec, options);
  nlohmann::json extra = {{"sandbox", args.confined ? "openshell" : "none"},
                          {"policy", policy_summary(spec, block_wall_ms)},
                          {"degradations", sandbox->degradations()}};
  if (display) extra["display"] = display->describe();
  int status;
  {
    executors::Session session(*sandbox, events, std::move(languages), options);
    status = session.run(STDIN_FILENO, extra);
  }
  sandbox->shutdown();
  return status;
}

const Registration registration{{"supervise", "serve a sandboxed session over the JSON-lines protocol",
                                 &run_supervise, &supervise_options}};

}  // namespace
}  // namespace oishell::cli
