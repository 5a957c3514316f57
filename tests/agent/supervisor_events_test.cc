// The agent's handling of supervisor events the real supervisor sends only in rare situations, with a scripted
// stand-in for `oishell supervise` (fake_supervisor.py) under the real `interpreter`: reports that come between
// blocks and at shutdown, a host name with escape sequences in a network question and a denial.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

class SupervisorEvents : public ::testing::Test {
 protected:
  // Runs the interpreter against `server`, with the fake supervisor playing `script`.
  RunResult run(ScriptedServer& server, const json& script, std::vector<std::string> extra,
                const std::string& typed = "") {
    std::string script_path = files_.path() + "/supervisor.json";
    std::ofstream(script_path) << script.dump();
    // A wrapper, so that the fake need not be executable in the source tree.
    std::string wrapper = files_.path() + "/oishell";
    std::ofstream(wrapper) << "#!/bin/sh\nexec /usr/bin/python3 " << FAKE_SUPERVISOR << " \"$@\"\n";
    ::chmod(wrapper.c_str(), 0755);
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", server.base(), "--plain"};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    o.env = {{"OPENAI_API_KEY", "sk-fake"},
             {"OISHELL_BIN", wrapper},
             {"FAKE_SUPERVISOR_SCRIPT", script_path},
             {"FAKE_SUPERVISOR_LOG", log_path()}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.stdin_data = typed;
    RunResult r = run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
    return r;
  }
  std::string log_path() const { return files_.path() + "/requests.jsonl"; }
  std::string fed_back(ScriptedServer& s, size_t i) {
    auto reqs = s.requests();
    return i < reqs.size() ? last_tool_output(reqs[i]["body"]) : "<no request " + std::to_string(i) + ">";
  }

  TempDir files_, workspace_, home_;
};

json done() { return {{"event", "done"}, {"id", "$ID"}, {"status", "ok"}, {"exit_code", 0}, {"duration_ms", 1}}; }
json output(const std::string& text) {
  return {{"event", "output"}, {"id", "$ID"}, {"stream", "stdout"}, {"data", text}};
}

TEST_F(SupervisorEvents, BetweenBlocksTheyGoWithTheNextBlockAndAtShutdownOnlyToTheUser) {
  json script = {
      {"blocks",
       json::array({
           // An executor that ends after its block's `done`: its exit lists the protected path it changed.
           json::array({output("one\n"), done(), {{"sleep_ms", 300}},
                        {{"event", "exit"}, {"process_id", 1}, {"status", 0}, {"exit_code", 0},
                         {"protected_changed", {"/w/.envrc (created)"}}}}),
           json::array({output("two\n"), done()}),
           // Output that would clear the screen, and with it the warning shown after the second block (the
           // filter drops that since issue 34; scrolling it away is still possible).
           json::array({output("\x1b[2J\x1b[Hthree\n"), done()}),
       })},
      // At shutdown every exit repeats the list since the start; a new item and a neutralised repository come too.
      {"shutdown", json::array({{{"event", "exit"}, {"process_id", 2}, {"status", 137}, {"signal", 9},
                                 {"protected_changed", {"/w/.envrc (created)", "/w/.vscode/tasks.json (created)"}}},
                                {{"event", "repo_neutralised"}, {"path", "/w/sub/.git/config"},
                                 {"found", "written during the run; sets core.fsmonitor"},
                                 {"action", "rewritten without core.fsmonitor"}}})}};
  ScriptedServer server(json::array(
      {tool("shell", "echo one"), tool("shell", "echo two"), tool("shell", "clear; echo three"), say("All done.")}));
  RunResult r = run(server, script, {"go"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(4u, server.requests().size()) << r.out << r.err;
  // The first block's result does not have it (it came later), the second's does.
  EXPECT_EQ(std::string::npos, fed_back(server, 1).find(".envrc")) << fed_back(server, 1);
  EXPECT_NE(std::string::npos, fed_back(server, 2).find("protected path changed during the run: /w/.envrc (created)"))
      << fed_back(server, 2);
  // The user saw it when it came and once more in the summary at the end (a block ran after it), not at every
  // repetition; and what came at shutdown, last.
  size_t times = 0;
  const std::string warning = "WARNING: sandbox: protected path changed during the run: /w/.envrc (created)";
  for (size_t at = r.out.find(warning); at != std::string::npos; at = r.out.find(warning, at + 1)) ++times;
  EXPECT_EQ(2u, times) << r.out;
  size_t vscode = r.out.find("WARNING: sandbox: protected path changed during the run: /w/.vscode/tasks.json");
  size_t repo = r.out.find("WARNING: sandbox: git repository neutralised: /w/sub/.git/config: written during the "
                           "run; sets core.fsmonitor; rewritten without core.fsmonitor");
  EXPECT_NE(std::string::npos, vscode) << r.out;
  EXPECT_NE(std::string::npos, repo) << r.out;
  EXPECT_LT(r.out.find("All done."), vscode) << r.out;
  // A block ran after the first warning (its output cleared the screen): it is repeated at the end.
  size_t summary = r.out.find("During this session the sandbox reported:");
  EXPECT_NE(std::string::npos, summary) << r.out;
  EXPECT_LT(r.out.find("three\n"), summary) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("\x1b[2J")) << r.out;  // (and the clearing never reached the terminal)
  // The model never heard of what came at shutdown, and neither did the saved conversation.
  for (const auto& req : server.requests()) {
    EXPECT_EQ(std::string::npos, conversation_text(req["body"]).find("tasks.json"));
    EXPECT_EQ(std::string::npos, conversation_text(req["body"]).find("sub/.git/config"));
  }
  std::string saved = saved_conversation(home_.path()).dump();
  EXPECT_EQ(std::string::npos, saved.find("tasks.json")) << saved;
  EXPECT_NE(std::string::npos, saved.find("/w/.envrc (created)")) << saved;
}

TEST_F(SupervisorEvents, AHostNameWithEscapesIsShownEscapedInTheQuestionAndTheDenial) {
  const std::string host = "evil\x1b]52;c;UFdORUQ=\x07.example";
  json script = {{"blocks", json::array({json::array({
                                {{"event", "ask"}, {"ask_id", 7}, {"host", host}, {"port", 443}},
                                {{"event", "net.denied"}, {"host", "a\x1b[2Jb\xc2\x9b" "31m"}, {"port", 443},
                                 {"reason", "on_unlisted: deny\n\x1b[1A"}, {"rule", "x"}},
                                {{"event", "error"}, {"message", "no id: ignored \x1b]0;T\x07"}},
                                done(),
                            })})}};
  ScriptedServer server(json::array({tool("python", "fetch()"), say("Blocked.")}));
  RunResult r = run(server, script, {"fetch"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  // No terminal to ask: denied, and said so with the name escaped.
  EXPECT_NE(std::string::npos,
            r.out.find("code wants to reach evil\\x1b]52;c;UFdORUQ=\\x07.example:443 — denied (no terminal to ask)"))
      << r.out;
  EXPECT_NE(std::string::npos, r.out.find("a\\x1b[2Jb\\u{009b}31m:443 was denied by the sandbox (on_unlisted: deny"
                                          "\\x0a\\x1b[1A)"))
      << json(r.out).dump();
  for (const char* raw : {"\x1b]52", "\x1b[2J", "\xc2\x9b", "\x1b[1A", "\x1b]0;"}) {
    EXPECT_EQ(std::string::npos, r.out.find(raw)) << json(raw).dump() << " in " << json(r.out).dump();
  }
  // The answer sent back is a denial, for ask 7.
  bool answered = false;
  std::ifstream log(log_path());
  for (std::string line; std::getline(log, line);) {
    json request = json::parse(line);
    if (request["op"] == "answer") {
      answered = true;
      EXPECT_EQ(7, request["ask_id"]);
      EXPECT_EQ("deny", request["decision"]);
    }
  }
  EXPECT_TRUE(answered);
  // The model is told with the same escaping.
  std::string fed = fed_back(server, 1);
  EXPECT_NE(std::string::npos, fed.find("evil\\x1b]52;c;UFdORUQ=\\x07.example:443")) << fed;
}

// A supervisor that dies takes the session's live policy changes with it; the agent gives them to the one it starts
// again before anything runs there, so that a host denied with %policy deny is not allowed again by the restart
// (issue 38). A sandbox started again that refuses them runs nothing, and says why.
std::vector<json> requests_of(const std::string& log) {
  std::vector<json> out;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

TEST_F(SupervisorEvents, ASandboxStartedAgainIsGivenTheSessionsPolicyChangesFirst) {
  json script = {{"blocks", json::array({json::array({output("one\n"), done(), {{"die", 3}}}),
                                         json::array({output("two\n"), done()})})}};
  // The model's answer after the first block takes a while (held 300 ms a chunk): the supervisor is surely gone
  // before the second block is sent, so the agent finds it gone when it sends (EPIPE). One that dies after the
  // request went into its pipe is reported as having died while running the block (whether it ran is unknown).
  json slow = say("One.");
  slow["hold_ms"] = 300;
  ScriptedServer server(json::array({tool("shell", "echo one"), slow, tool("shell", "echo two"), say("Two.")}));
  RunResult r = run(server, script, {}, "%policy deny evil.example\nfirst\nsecond\n");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  std::vector<std::string> ops;
  for (const json& q : requests_of(log_path())) ops.push_back(q.value("op", ""));
  // The change, the first block (its supervisor then dies), the change again to the new one, the second block.
  ASSERT_EQ((std::vector<std::string>{"policy", "exec", "policy", "exec", "shutdown"}), ops) << r.out << r.err;
  auto requests = requests_of(log_path());
  EXPECT_EQ(json::array({"evil.example"}), requests[0]["deny"]);
  EXPECT_EQ(requests[0]["deny"], requests[2]["deny"]);
  EXPECT_NE(std::string::npos, r.out.find("two")) << r.out;
  // The user and the model are told that the block ran in a new sandbox, its variables gone.
  EXPECT_NE(std::string::npos, r.out.find("session was restarted (the sandbox had ended")) << r.out;
  EXPECT_NE(std::string::npos, fed_back(server, 3).find("a new one was started); its variables were lost"))
      << fed_back(server, 3);
}

TEST_F(SupervisorEvents, ASandboxStartedAgainThatRefusesThemRunsNothing) {
  json script = {{"policy", "rejected_after_restart"},
                 {"blocks", json::array({json::array({output("one\n"), done(), {{"die", 3}}}),
                                         json::array({output("two\n"), done()})})}};
  json slow = say("One.");
  slow["hold_ms"] = 300;  // as above: the supervisor is gone before the second block is sent
  ScriptedServer server(json::array({tool("shell", "echo one"), slow, tool("shell", "echo two"), say("Two.")}));
  RunResult r = run(server, script, {}, "%policy deny evil.example\nfirst\nsecond\n");
  std::vector<std::string> ops;
  for (const json& q : requests_of(log_path())) ops.push_back(q.value("op", ""));
  EXPECT_EQ(1, std::count(ops.begin(), ops.end(), "exec")) << r.out << r.err;  // the second block never ran
  EXPECT_NE(std::string::npos, (r.out + r.err).find("refused this session's policy change")) << r.out << r.err;
}

}  // namespace
}  // namespace oishell::agent::test
