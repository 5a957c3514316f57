#pragma once
// `interpreter --embed`: the agent for a program that embeds it (the Python package `interpreter`, python/), as JSON
// lines on stdin/stdout. One request per line down, events up; Open Interpreter's LMC chunks inside. docs/python.md
// ("The protocol") has the whole table.
//
//   {"op":"chat","id":ID,"message":TEXT|null,"messages":[...],"settings":{...}}
//        one response: the conversation is replaced by `messages` (OI's message dicts), `settings` (OI's names:
//        model, api_base, api_key, temperature, context_window, max_tokens, supports_vision, auto_run,
//        system_message, custom_instructions, loop, max_output, languages, ...) apply from now on, then `message`
//        is answered (null: the conversation's last message, the user's). Events: {"event":"chunk","id","chunk"}
//        for each LMC chunk, then {"event":"end","id","status","messages"[,"error"]}.
//   {"op":"run","id","language","code"}      a block run in the sandbox without the model (OI's computer.run):
//                                             console chunks, then end.
//   {"op":"languages","id"}                  {"event":"languages","id","languages":[names]} (starts the sandbox)
//   {"op":"reset","id"}                      the executors that ran code are restarted (their state is lost); end
//   {"op":"answer","id","run":true|false}    the answer to a confirmation chunk (auto_run off)
//   {"op":"stop"}                            stops the response or block that runs, as Ctrl-C does, and ends it
// At start {"event":"ready","protocol":1,"version","sandbox","system_message"} (the default instructions). A bad
// request is answered {"event":"error"[,"id"],"message"}. Requests run one at a time, in order; `answer` and `stop`
// are read while one runs. The end of stdin stops what runs and shuts the sandbox down.
// Code runs in the session's sandbox exactly as in the terminal; the model's key stays in this process. A network
// destination the policy leaves to the user is denied (nobody is asked).
#include "agent/config/config.h"
#include "agent/sandbox/executor.h"
#include "agent/llm/key_store.h"

namespace oishell::agent::embed {

struct EmbedParts {
  AgentConfig config;             // the flags' (no profile is read: Open Interpreter's Python API reads none)
  EnvLookup env;                  // the providers' key variables
  const KeyStore* keys = nullptr;
  Executor* executor = nullptr;   // the sandbox, shared by the responses
  int in_fd = 0;                  // the protocol's input and output
  int out_fd = 1;
};

// Serves until the input ends. Returns the process exit status (0).
int run_embed(EmbedParts parts);

}  // namespace oishell::agent::embed
