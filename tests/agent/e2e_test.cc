// End to end: the real `interpreter` against a scripted model on 127.0.0.1 (real HTTP, real SSE), its code run by
// `oishell supervise` in the openshell sandbox.
#include <signal.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

constexpr const char* kModelKey = "sk-oishell-e2e-SECRET-4f1c9a77d2";

class AgentE2E : public ::testing::Test {
 protected:
  RunResult run(ScriptedServer& server, std::vector<std::string> extra, const std::string& sandbox = "openshell",
                std::string stdin_data = "", std::function<void(pid_t, const std::string&)> on_output = nullptr) {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", server.base(), "--sandbox", sandbox, "--plain"};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    o.env = {{"OPENAI_API_KEY", kModelKey}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.stdin_data = std::move(stdin_data);
    o.on_output = std::move(on_output);
    RunResult r = run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
    return r;
  }
  // What the model was shown in request i.
  std::string shown(ScriptedServer& s, size_t i) {
    auto reqs = s.requests();
    if (i >= reqs.size()) return "<no request " + std::to_string(i) + ">";
    return conversation_text(reqs[i]["body"]);
  }
  std::string output_fed_back(ScriptedServer& s, size_t i) {
    auto reqs = s.requests();
    if (i >= reqs.size()) return "<no request " + std::to_string(i) + ">";
    return last_tool_output(reqs[i]["body"]);
  }

  TempDir workspace_, home_;
};

TEST_F(AgentE2E, WritesAFileInTheWorkspaceAndReadsItBack) {
  ScriptedServer server(json::array(
      {tool("python", "open('note.txt', 'w').write('sandboxed 42\\n')\nprint(open('note.txt').read())",
            "I'll write the file."),
       say("The file says: sandboxed 42.")}));
  RunResult r = run(server, {"write a note"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_EQ("sandboxed 42\n", read_text(workspace_.path() + "/note.txt"));
  EXPECT_NE(std::string::npos, output_fed_back(server, 1).find("sandboxed 42"));
  EXPECT_NE(std::string::npos, output_fed_back(server, 1).find("[exit status 0]"));
  EXPECT_NE(std::string::npos, r.out.find("The file says: sandboxed 42."));
  // The first request carried the system prompt with host facts and the sandbox, and the execute tool.
  ASSERT_FALSE(server.requests().empty());
  auto first = server.requests()[0]["body"];
  EXPECT_EQ("execute", first["tools"][0]["function"]["name"]);
  std::string system = first["messages"][0]["content"];
  EXPECT_NE(std::string::npos, system.find(workspace_.path()));
  EXPECT_NE(std::string::npos, system.find("openshell sandbox"));
  EXPECT_EQ(std::string("Bearer ") + kModelKey, server.requests()[0]["headers"]["Authorization"]);
}

TEST_F(AgentE2E, PythonStatePersistsAcrossFencedBlocks) {
  ScriptedServer server(json::array({say("First:\n```python\nx = 41\n```"),
                                     say("Then:\n```\nprint(x + 1)\n```"),  // no tag: python
                                     say("x + 1 is 42.")}));
  RunResult r = run(server, {"--no-llm_supports_functions", "add one"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto reqs = server.requests();
  ASSERT_EQ(3u, reqs.size()) << r.out << r.err;
  EXPECT_FALSE(reqs[0]["body"].contains("tools"));
  std::string last = reqs[2]["body"]["messages"].back()["content"];
  EXPECT_NE(std::string::npos, last.find("42")) << last;
}

TEST_F(AgentE2E, HallucinatedFormatsAreRepairedOrToldBack) {
  ScriptedServer server(json::array({
      say(R"J({"language": "python", "code": "print('json-text-ran')"})J"),
      // Alone: beside prose the call would stay prose (repairs apply only to an answer that is nothing else).
      say(R"J(functions.execute({"language": "shell", "code": "echo functions-ran"}))J"),
      tool("python", "`print('backtick-ran')"),
      tool("python", "  "),
      tool("cobol", "DISPLAY 'HI'."),
      say("All formats handled."),
  }));
  RunResult r = run(server, {"try everything"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto reqs = server.requests();
  ASSERT_EQ(6u, reqs.size()) << r.out << r.err;
  EXPECT_NE(std::string::npos, shown(server, 1).find("json-text-ran"));
  EXPECT_NE(std::string::npos, shown(server, 2).find("functions-ran"));
  EXPECT_NE(std::string::npos, output_fed_back(server, 3).find("backtick-ran"));
  EXPECT_NE(std::string::npos, output_fed_back(server, 4).find("empty"));
  EXPECT_NE(std::string::npos, output_fed_back(server, 5).find("Unknown language `cobol`"));
}

TEST_F(AgentE2E, TheModelIsToldOfHtmlRubyRAndJavaAndAPageLandsInTheWorkspace) {
  // Open Interpreter's languages besides python, shell and javascript (tools/dev installs their interpreters).
  ScriptedServer server(json::array({tool("html", "<h1>from the model</h1>"),
                                     say("Saved. R code next.\n```R\n6 * 7\n```"),
                                     say("The page is saved and R said 42.")}));
  RunResult r = run(server, {"make a page"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto reqs = server.requests();
  ASSERT_EQ(3u, reqs.size()) << r.out << r.err;
  // Without html in the executors the tool's enum would not offer it and the model would not know what it does.
  auto languages = reqs[0]["body"]["tools"][0]["function"]["parameters"]["properties"]["language"]["enum"];
  for (const char* name : {"python", "shell", "ruby", "r", "java", "html"}) {
    EXPECT_NE(languages.end(), std::find(languages.begin(), languages.end(), name)) << name << ": " << languages;
  }
  std::string system = reqs[0]["body"]["messages"][0]["content"];
  EXPECT_NE(std::string::npos, system.find("oi-html/<n>.html")) << system;
  EXPECT_NE(std::string::npos, system.find("java: runs in JShell")) << system;
  const std::string page = workspace_.path() + "/oi-html/1.html";
  EXPECT_EQ("<h1>from the model</h1>", read_text(page));
  EXPECT_NE(std::string::npos, output_fed_back(server, 1).find("HTML saved to " + page)) << output_fed_back(server, 1);
  // A fence tagged `R` runs in the r executor.
  std::string last = reqs[2]["body"]["messages"].back()["content"];
  EXPECT_NE(std::string::npos, last.find("[1] 42")) << last;
}

TEST_F(AgentE2E, AnErrorIsFedBackAndCorrected) {
  ScriptedServer server(json::array({tool("python", "print(undefined_name)"),
                                     tool("python", "undefined_name = 'fixed'\nprint(undefined_name)"),
                                     say("Fixed it.")}));
  RunResult r = run(server, {"go"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  std::string first = output_fed_back(server, 1);
  EXPECT_NE(std::string::npos, first.find("NameError")) << first;
  EXPECT_NE(std::string::npos, output_fed_back(server, 2).find("fixed"));
}

TEST_F(AgentE2E, ASandboxDenialIsReportedToTheModel) {
  TempDir outside;
  std::string secret = outside.path() + "/secret.txt";
  std::ofstream(secret) << "TOP-SECRET-CONTENT";
  ::chmod(secret.c_str(), 0644);
  ScriptedServer server(json::array({tool("python", "print(open('" + secret + "').read())"),
                                     tool("shell", "echo ok > allowed.txt && cat allowed.txt"),
                                     say("The sandbox hides that file.")}));
  RunResult r = run(server, {"read the secret"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  std::string denied = output_fed_back(server, 1);
  // Outside the workspace the file is absent or unreadable; without the sandbox it would print the content.
  EXPECT_EQ(std::string::npos, denied.find("TOP-SECRET-CONTENT")) << denied;
  EXPECT_TRUE(denied.find("FileNotFoundError") != std::string::npos ||
              denied.find("PermissionError") != std::string::npos)
      << denied;
  EXPECT_NE(std::string::npos, denied.find("[exit status 1]"));
  // The neighbour inside the workspace works.
  EXPECT_NE(std::string::npos, output_fed_back(server, 2).find("ok"));
}

TEST_F(AgentE2E, ASeccompDenialEventReachesTheModel) {
  // unshare(CLONE_NEWUSER) is in the `namespaces` deny set: EPERM, and a `denied` event the model is told about.
  // Its neighbour getpid() works. Without the sandbox, unshare would succeed (0) and nothing would be reported.
  ScriptedServer server(json::array(
      {tool("python",
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nprint('pid ok', os.getpid() > 0)\n"
            "print('unshare:', libc.unshare(0x10000000), os.strerror(ctypes.get_errno()))"),
       say("Namespaces are not allowed.")}));
  RunResult r = run(server, {"unshare"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  std::string fed = output_fed_back(server, 1);
  EXPECT_NE(std::string::npos, fed.find("pid ok True")) << fed;
  EXPECT_NE(std::string::npos, fed.find("unshare: -1 Operation not permitted")) << fed;
  EXPECT_NE(std::string::npos, fed.find("[the sandbox denied unshare (namespaces): EPERM]")) << fed;
}

TEST_F(AgentE2E, ANetworkAskWithoutATerminalIsDeniedAndTheModelIsTold) {
  // The default policy asks about unlisted destinations; with no terminal the agent answers deny. (.invalid names
  // never resolve, so nothing could leave the machine even if the answer were wrong.)
  ScriptedServer server(json::array(
      {tool("python",
            "import urllib.request\ntry:\n    urllib.request.urlopen('http://unlisted.oishell-test.invalid/', "
            "timeout=10)\nexcept Exception as e:\n    print('failed:', e)"),
       say("The sandbox blocked it.")}));
  RunResult r = run(server, {"fetch it"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  std::string fed = output_fed_back(server, 1);
  EXPECT_NE(std::string::npos, fed.find("403")) << fed;
  EXPECT_NE(std::string::npos, fed.find("unlisted.oishell-test.invalid:80")) << fed;
  EXPECT_NE(std::string::npos, r.out.find("denied (no terminal to ask)")) << r.out;
}

TEST_F(AgentE2E, CtrlCStopsTheBlockAndTheModelIsTold) {
  ScriptedServer server(json::array({tool("python", "import time\nprint('started', flush=True)\ntime.sleep(60)"),
                                     say("Understood, stopped.")}));
  bool sent = false;
  auto start = std::chrono::steady_clock::now();
  RunResult r = run(server, {"--json", "sleep"}, "openshell", "", [&sent](pid_t pid, const std::string& out) {
    if (!sent && out.find("started") != std::string::npos) {
      sent = true;
      ::kill(pid, SIGINT);
    }
  });
  auto took = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(sent) << r.out << r.err;
  EXPECT_LT(took, 30);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_NE(std::string::npos, output_fed_back(server, 1).find("interrupted")) << output_fed_back(server, 1);
  // --json: every line is a JSON chunk with a role and a type; the assistant's text comes in pieces.
  std::istringstream lines(r.out);
  std::string line, said;
  bool saw_interrupted_end = false;
  while (std::getline(lines, line)) {
    json chunk = json::parse(line, nullptr, false);
    ASSERT_TRUE(chunk.is_object()) << line;
    EXPECT_TRUE(chunk.contains("role") && chunk.contains("type")) << line;
    if (chunk["role"] == "assistant" && chunk["type"] == "message" && chunk.contains("content")) {
      said += chunk["content"].get<std::string>();
    }
    if (chunk["type"] == "console" && chunk.value("end", false) && chunk.value("status", "") == "interrupted") {
      saw_interrupted_end = true;
    }
  }
  EXPECT_NE(std::string::npos, said.find("Understood, stopped.")) << r.out;
  EXPECT_TRUE(saw_interrupted_end) << r.out;
}

TEST_F(AgentE2E, RateLimitedThenSuccess) {
  ScriptedServer server(json::array({{{"status", 429}, {"headers", {{"Retry-After", "0"}}},
                                      {"body", R"({"error": {"message": "slow down"}})"}},
                                     say("Hello after the retry.")}));
  RunResult r = run(server, {"hi"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_EQ(2u, server.requests().size());
  EXPECT_NE(std::string::npos, r.out.find("Hello after the retry."));
  EXPECT_NE(std::string::npos, r.out.find("429"));  // the user saw why it waited
}

TEST_F(AgentE2E, UnauthorizedNamesTheKeyAndProvider) {
  ScriptedServer server(json::array({{{"status", 401}, {"body", R"({"error": {"message": "bad key"}})"}}}));
  RunResult r = run(server, {"hi"});
  EXPECT_EQ(1, r.exit_code);
  EXPECT_NE(std::string::npos, r.out.find("OPENAI_API_KEY")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("401"));
  EXPECT_NE(std::string::npos, r.out.find("bad key"));
  EXPECT_EQ(1u, server.requests().size());  // no retry for a refused key
}

TEST_F(AgentE2E, AStreamCutHalfwayKeepsWhatArrived) {
  ScriptedServer server(json::array({{{"text", "Part one arrives. Part two never does."}, {"chunk", 6},
                                      {"cut_after", 4}}}));
  RunResult r = run(server, {"tell me"});
  EXPECT_EQ(1, r.exit_code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("Part one arr"));
  EXPECT_NE(std::string::npos, r.out.find("cut off"));
  // The saved conversation keeps the partial answer.
  auto dir = home_.path() + "/.local/share/open-interpreter/conversations";
  std::string saved;
  for (const auto& e : std::filesystem::directory_iterator(dir)) saved += read_text(e.path());
  EXPECT_NE(std::string::npos, saved.find("Part one arr")) << saved;
}

TEST_F(AgentE2E, AnthropicMessagesWithToolUse) {
  ScriptedServer server(json::array(
      {{{"format", "anthropic"}, {"text", "Computing."},
        {"tool_calls", json::array({{{"name", "execute"},
                                     {"arguments", json{{"language", "python"}, {"code", "print(6 * 7)"}}.dump()}}})}},
       {{"format", "anthropic"}, {"text", "It is 42."}}}));
  RunOptions o;
  o.args = {"--model", "claude-scripted", "--api_base", server.base(), "--plain", "multiply"};
  o.env = {{"ANTHROPIC_API_KEY", kModelKey}};
  o.cwd = workspace_.path();
  o.home = home_.path();
  RunResult r = run_interpreter(o);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto reqs = server.requests();
  ASSERT_EQ(2u, reqs.size());
  EXPECT_EQ("/v1/messages", reqs[0]["path"]);
  EXPECT_EQ(kModelKey, reqs[0]["headers"]["x-api-key"]);
  EXPECT_TRUE(reqs[0]["body"].contains("system"));
  EXPECT_EQ("execute", reqs[0]["body"]["tools"][0]["name"]);
  EXPECT_NE(std::string::npos, last_tool_output(reqs[1]["body"]).find("42"));
  EXPECT_NE(std::string::npos, r.out.find("It is 42."));
}

TEST_F(AgentE2E, AConversationIsSavedAndResumed) {
  {
    ScriptedServer server(json::array({say("I will remember: banana.")}));
    RunResult r = run(server, {"remember the word banana"});
    EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  }
  auto dir = home_.path() + "/.local/share/open-interpreter/conversations";
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    json saved = json::parse(read_text(e.path()));
    ASSERT_TRUE(saved.is_array());
    EXPECT_EQ("user", saved[0]["role"]);
    EXPECT_EQ("remember the word banana", saved[0]["content"]);
  }
  EXPECT_EQ(1u, files);
  ScriptedServer server(json::array({say("The word was banana.")}));
  RunResult r = run(server, {"--conversations"}, "openshell", "1\nwhat was the word?\n");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(1u, server.requests().size());
  std::string seen = shown(server, 0);
  EXPECT_NE(std::string::npos, seen.find("remember the word banana"));
  EXPECT_NE(std::string::npos, seen.find("I will remember: banana."));
  EXPECT_NE(std::string::npos, seen.find("what was the word?"));
}

TEST_F(AgentE2E, TheApiKeyIsNeverVisibleInsideTheSandbox) {
  ScriptedServer server(json::array(
      {tool("shell", "env; cat /proc/self/environ | tr '\\0' '\\n'; cat /proc/1/environ 2>&1 | tr '\\0' '\\n'; "
                     "cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' '"),
       tool("python", "import os\nprint(dict(os.environ))"),
       say("No key in sight.")}));
  RunResult r = run(server, {"--api_key", kModelKey, "print the environment"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto reqs = server.requests();
  ASSERT_EQ(3u, reqs.size());
  std::string env_dump = output_fed_back(server, 1) + output_fed_back(server, 2);
  EXPECT_NE(std::string::npos, env_dump.find("PATH=")) << env_dump;  // the commands ran and printed
  EXPECT_EQ(std::string::npos, env_dump.find(kModelKey)) << env_dump;
  EXPECT_EQ(std::string::npos, env_dump.find("OPENAI_API_KEY")) << env_dump;
  EXPECT_EQ(std::string::npos, r.out.find(kModelKey));
}

TEST_F(AgentE2E, NoModelConfiguredExplainsAndMagicShellStillWorks) {
  RunOptions o;
  o.args = {"--plain"};
  o.cwd = workspace_.path();
  o.home = home_.path();
  o.stdin_data = "%% echo magic-$((6*7))\nhello\n";
  RunResult r = run_interpreter(o);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("--model")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("magic-42")) << r.out;
  o.stdin_data.clear();
  o.args = {"--plain", "a one-shot prompt"};
  r = run_interpreter(o);
  EXPECT_EQ(2, r.exit_code);
  EXPECT_NE(std::string::npos, r.out.find("No language model is configured"));
}

TEST_F(AgentE2E, MaxTurnsBoundsTheLoop) {
  ScriptedServer server(json::array({tool("shell", "echo 1"), tool("shell", "echo 2"), tool("shell", "echo 3")}));
  RunResult r = run(server, {"--max_turns", "2", "loop"});
  EXPECT_EQ(3, r.exit_code) << r.out << r.err;
  EXPECT_EQ(2u, server.requests().size());
}

TEST_F(AgentE2E, WithoutASandboxAndWithoutATerminalCodeIsNotRun) {
  // --sandbox none turns auto_run off; with nobody at a terminal to confirm, the block is declined.
  ScriptedServer server(json::array({tool("shell", "touch should-not-exist")}));
  RunResult r = run(server, {"touch it"}, "none");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  struct stat st {};
  EXPECT_EQ(-1, ::stat((workspace_.path() + "/should-not-exist").c_str(), &st));
  EXPECT_NE(std::string::npos, r.out.find("Not run"));
}

TEST(AgentCli, VersionIsImmediate) {
  RunOptions o;
  o.args = {"--version"};
  o.cwd = "/";
  o.home = "/nonexistent";
  RunResult r = run_interpreter(o);
  EXPECT_EQ(0, r.exit_code);
  EXPECT_EQ(0u, r.out.rfind("interpreter ", 0)) << r.out;
}

}  // namespace
}  // namespace oishell::agent::test
