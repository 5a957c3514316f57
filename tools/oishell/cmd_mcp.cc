// `oishell mcp`: one sandbox served as a Model Context Protocol server on stdio, or with --http on loopback (MCP's
// streamable HTTP transport, with a token) (docs/mcp.md): the tools run code, commands and file operations inside
// it; its policy comes from the usual flags.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/data_dir.h"
#include "base/http/bearer_token.h"
#include "base/http/loopback_socket.h"
#include "oishell/build_config.h"
#include "policy/compiler.h"
#include "policy/explain.h"
#include "policy/load.h"
#include "policy/summary.h"
#include "runtime/executors/event_writer.h"
#include "runtime/executors/language.h"
#include "runtime/executors/session.h"
#include "runtime/mcp/http_transport.h"
#include "runtime/mcp/server.h"
#include "runtime/outside/layer_facts.h"
#include "runtime/outside/sandbox.h"
#include "tools/oishell/command.h"
#include "tools/oishell/mcp_http_options.h"
#include "tools/oishell/policy_flags.h"
#include "tools/oishell/session_setup.h"

namespace oishell::cli {
namespace {

// --http: SIGINT and SIGTERM end the session (as the client's DELETE does), through the transport's stop pipe.
int g_stop_fd = -1;

void on_stop_signal(int) {
  const uint64_t one = 1;
  (void)!::write(g_stop_fd, &one, sizeof one);
}

void watch_stop_signals(int stop_fd) {
  g_stop_fd = stop_fd;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

constexpr const char* kUsage =
    "usage: oishell mcp [--policy FILE | --profile NAME] [--workspace DIR] [--timeout DUR] [--memory SIZE]\n"
    "                   [--net none|proxy] [--allow-domain D]... [--allow-udp HOST:PORT]... [--ro PATH]...\n"
    "                   [--rw PATH]... [--hide PATH]... [--unix PATH]... [--env K=V]... [--prestart LANG]...\n"
    "                   [--http 127.0.0.1:PORT [--token-file FILE]]\n"
    "\n"
    "Serves one sandbox as a Model Context Protocol server on stdin and stdout (docs/mcp.md): tools run_code,\n"
    "run_command, read_file, write_file, edit_file, list_files, interrupt, policy and reset, all inside the\n"
    "sandbox the policy compiles to; the workspace's files and the session's event log as resources. Network\n"
    "questions (on_unlisted: ask) go to the client as elicitation when it declares it, and are denied otherwise.\n"
    "The policy's wall_time (or --timeout) limits each call. Ends when the client closes stdin.\n"
    "\n"
    "--http 127.0.0.1:PORT serves MCP's streamable HTTP transport instead, at http://127.0.0.1:PORT/mcp (PORT 0:\n"
    "any free port; [::1]:PORT for IPv6; any address but loopback is refused). Every request needs the header\n"
    "`Authorization: Bearer TOKEN`: a fresh 256-bit TOKEN is printed once on stderr, or kept in --token-file FILE\n"
    "(read when it exists, mode 0600 and yours; else created so). A Host other than the address served is refused\n"
    "(421), so is a browser page of another origin (403); no cookie is used. One sandbox, one session at a time (a\n"
    "new initialize ends the previous client's); the server ends at the client's DELETE, or at SIGINT or SIGTERM.\n"
    "A client that closes a call's stream before its answer cancels the call.\n"
    "Exit status: 0 at the end of input (or of the session); 2 a bad option or address; 125 the policy is invalid;\n"
    "126 the sandbox could not be built.\n";

const std::vector<completion::Option>& mcp_options() {
  static const std::vector<completion::Option> options = [] {
    std::vector<completion::Option> o = policy_flag_options();
    std::vector<std::string> languages;
    for (const auto& language : executors::all_languages()) languages.push_back(language.name);
    o.push_back({{"--prestart"}, completion::Value::choice, "LANG", "start this executor before the first call",
                 languages, true});
    o.push_back({{"--http"}, completion::Value::text, "127.0.0.1:PORT",
                 "serve MCP's streamable HTTP transport on this loopback address instead of stdio"});
    o.push_back({{"--token-file"}, completion::Value::file, "FILE",
                 "--http: the bearer token, read from FILE or created in it (mode 0600)"});
    return o;
  }();
  return options;
}

int run_mcp(int argc, char** argv) {
  PolicySource source;
  PolicyOverrides overrides;
  std::vector<std::string> prestart;
  std::string http_address, token_file;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    }
    const completion::Option* option = nullptr;
    std::string value;
    std::string error = read_option(argc, argv, &i, mcp_options(), &option, &value);
    if (error.empty() && !apply_policy_flag(option->names.front(), value, &source, &overrides)) {
      if (option->names.front() == "--prestart") {
        prestart.push_back(value);
      } else if (option->names.front() == "--http") {
        http_address = value;
      } else if (option->names.front() == "--token-file") {
        token_file = value;
      } else {
        error = "unknown option " + option->names.front();
      }
    }
    if (error.empty() && !source.file.empty() && !source.profile.empty())
      error = "--policy and --profile exclude each other";
    if (!error.empty()) {
      std::fprintf(stderr, "oishell mcp: %s\n\n%s", error.c_str(), kUsage);
      return kExitUsage;
    }
  }
  if (!token_file.empty() && http_address.empty()) {
    std::fprintf(stderr, "oishell mcp: --token-file goes with --http\n\n%s", kUsage);
    return kExitUsage;
  }
  // --http: the listener and the token first, so that a refused address fails before any sandbox work.
  std::unique_ptr<mcp::HttpTransport> transport;
  std::string token;
  if (!http_address.empty()) {
    auto address = parse_http_address(http_address);
    auto listener = address ? http::listen_loopback(address.value().host, address.value().port)
                            : Result<http::Listener>(address.status());
    if (!listener) {
      std::fprintf(stderr, "oishell mcp: %s\n", listener.status().message().c_str());
      return kExitUsage;
    }
    if (!token_file.empty()) {
      auto loaded_token = load_or_create_token_file(token_file);
      if (!loaded_token) {
        std::fprintf(stderr, "oishell mcp: %s\n", loaded_token.status().message().c_str());
        return kExitUsage;
      }
      token = std::move(loaded_token.value());
    } else {
      token = http::generate_token();
    }
    transport = std::make_unique<mcp::HttpTransport>(
        std::move(listener.value()), token, rpc::RpcChannel::kMaxLineBytes,
        [](const std::string& line) { std::fprintf(stderr, "oishell mcp: %s\n", line.c_str()); });
  }
  ::signal(SIGPIPE, SIG_IGN);  // a client that goes away is an EPIPE, noticed by the server

  // The policy model is kept beside the spec: `policy` says what it allows in explain's words.
  const CompileContext context = CompileContext::from_process();
  policy::LoadResult loaded = policy::load_policy(source);
  std::vector<policy::Diagnostic> errors = loaded.errors;
  if (loaded.ok()) policy::apply_overrides(loaded.policy, overrides, context, errors);
  Result<SandboxSpec> compiled = errors.empty() ? policy::compile(loaded.policy, context)
                                                : Result<SandboxSpec>(Status::error(policy::format_diagnostics(errors)));
  if (!compiled.is_ok()) {
    std::fprintf(stderr, "oishell: policy: %s\n", compiled.status().message().c_str());
    return kExitPolicyInvalid;
  }
  SessionSetup setup = prepare_session(std::move(compiled.value()), /*confined=*/true, prestart);
  auto helper = add_fs_helper(setup.spec);
  if (!helper) {
    std::fprintf(stderr, "oishell mcp: %s\n", helper.status().message().c_str());
    return kExitSandboxFailed;
  }

  mcp::ServerConfig config;
  config.version = build::kVersion;
  config.spec = setup.spec;
  config.policy_summary = policy_summary(setup.spec, setup.block_wall_ms);
  auto layers = layer_facts();
  config.policy_text = policy::explain(loaded.policy, setup.spec, layers.is_ok() ? &layers.value() : nullptr);
  config.fs_helper = *helper;
  config.network_asks = setup.spec.network.on_unlisted == OnUnlisted::ask;
  auto languages = executors::available_languages(setup.spec, setup.options);
  for (const auto& l : languages) config.languages.push_back(l.language->name);

  int in_fd = STDIN_FILENO, out_fd = STDOUT_FILENO;
  if (transport) {
    if (Status started = transport->start(); !started) {
      std::fprintf(stderr, "oishell mcp: %s\n", started.message().c_str());
      return kExitSandboxFailed;
    }
    watch_stop_signals(transport->stop_signal_fd());
    in_fd = transport->server_input();
    out_fd = transport->server_output();
    std::fprintf(stderr, "oishell mcp: serving MCP (streamable HTTP) at %s\n", transport->endpoint_url().c_str());
    if (token_file.empty()) {
      std::fprintf(stderr, "oishell mcp: token: %s\n", token.c_str());
    } else {
      std::fprintf(stderr, "oishell mcp: token in %s\n", token_file.c_str());
    }
    std::fflush(stderr);
  }
  mcp::McpServer server(in_fd, out_fd, std::move(config));
  // The handshake first: the client's initialize is answered before the sandbox is built (what comes after it waits
  // for the sandbox in the pipe).
  if (!server.greet()) return kExitOk;
  executors::RuntimeEventForwarder runtime_events(server.bridge());
  SandboxOptions sandbox_options;
  if (setup.spec.network.on_unlisted == OnUnlisted::ask)
    sandbox_options.ask = [&server](const relay::AskRequest& ask) { server.on_ask(ask); };
  auto created = Sandbox::create(setup.spec, runtime_events, std::move(sandbox_options));
  if (!created.is_ok()) {
    std::fprintf(stderr, "oishell: sandbox could not be built: %s\n", created.status().message().c_str());
    return kExitSandboxFailed;
  }
  std::unique_ptr<Sandbox> sandbox = std::move(created.value());
  server.set_ask_answer([&sandbox](uint64_t id, relay::AskAnswer answer) { sandbox->answer_ask(id, answer); });
  server.set_degradations(sandbox->degradations());

  nlohmann::json extra = {{"sandbox", "openshell"},
                          {"policy", policy_summary(setup.spec, setup.block_wall_ms)},
                          {"degradations", sandbox->degradations()}};
  if (Status started = server.bridge().start(*sandbox, std::move(languages), setup.options, extra); !started) {
    std::fprintf(stderr, "oishell mcp: %s\n", started.message().c_str());
    sandbox->shutdown();
    return kExitSandboxFailed;
  }
  const int status = server.serve();
  sandbox->shutdown();
  return status;
}

const Registration registration{{"mcp", "serve a sandbox as a Model Context Protocol server (stdio, or HTTP on loopback)", &run_mcp,
                                 &mcp_options}};

}  // namespace
}  // namespace oishell::cli
