#include "agent/core/feedback.h"

#include <gtest/gtest.h>

namespace oishell::agent {
namespace {

TEST(Feedback, LastMaxOutputCharactersMarkedTruncated) {
  OutputTail tail(10);
  tail.add("0123456789");
  tail.add("abcdefghij");
  ExecResult r;
  std::string text = format_feedback(tail, r, 10);
  EXPECT_EQ(0u, text.rfind("[output truncated: showing the last 10 of 20 characters]\nabcdefghij\n", 0)) << text;
  EXPECT_TRUE(text.ends_with("[exit status 0]"));
}

TEST(Feedback, ShortOutputUntouchedAndStatusReported) {
  OutputTail tail(2800);
  tail.add("hello\n");
  ExecResult r;
  r.status = "error";
  r.exit_code = 1;
  EXPECT_EQ("hello\n[exit status 1]", format_feedback(tail, r, 2800));
  r.status = "interrupted";
  EXPECT_NE(std::string::npos, format_feedback(tail, r, 2800).find("interrupted by the user"));
  r.status = "timeout";
  EXPECT_NE(std::string::npos, format_feedback(tail, r, 2800).find("ran out of time"));
}

TEST(Feedback, DenialsLimitsAndRestartsAreTold) {
  OutputTail tail(100);
  ExecResult r;
  r.denials.push_back({{"event", "net.denied"}, {"host", "evil.example"}, {"port", 443}, {"reason", "not allowed"}});
  r.denials.push_back({{"event", "denied"}, {"syscall", "mount"}, {"set", "mount_and_pivot"}});
  r.denials.push_back({{"event", "net.denied"}, {"protocol", "dns"}, {"host", "svc.example"}, {"port", 0},
                       {"reason", "denied by policy"}});
  r.limits.push_back({{"event", "limit"}, {"kind", "memory"}});
  r.restarts.push_back({{"event", "executor_restarted"}, {"language", "python"}, {"reason", "crashed"}});
  std::string text = format_feedback(tail, r, 100);
  EXPECT_NE(std::string::npos, text.find("(no output)"));
  EXPECT_NE(std::string::npos, text.find("network access to evil.example:443 was denied by the sandbox (not allowed)"));
  EXPECT_NE(std::string::npos, text.find("the sandbox denied mount (mount_and_pivot)"));
  // A name the DNS stub refused has no port yet: it is told as a name.
  EXPECT_NE(std::string::npos,
            text.find("the name svc.example was not resolved: the sandbox's policy does not allow it (denied by policy)"))
      << text;
  EXPECT_EQ(std::string::npos, text.find("svc.example:0")) << text;
  EXPECT_NE(std::string::npos, text.find("a sandbox limit was reached: memory"));
  EXPECT_NE(std::string::npos, text.find("the python session was restarted (crashed); its variables were lost"));
}

// A refused ask comes back as the ask and as the relay's denial after it: the model reads one line, with what the
// user can do. A denial nobody was asked about keeps its reason.
TEST(Feedback, ARefusedAskIsToldOnceWithWhatTheUserCanDo) {
  OutputTail tail(100);
  ExecResult r;
  r.denials.push_back({{"event", "net.denied"}, {"host", "api.example"}, {"port", 443}, {"reason", "denied when asked"}});
  r.denials.push_back({{"event", "net.denied"}, {"host", "other.example"}, {"port", 80}, {"reason", "not allowed"}});
  r.asks_denied.push_back({{"event", "ask"}, {"host", "api.example"}, {"port", 443}});
  r.asks_denied.push_back({{"event", "ask"}, {"host", "late.example"}, {"port", 443}});
  const std::string text = format_feedback(tail, r, 100);
  EXPECT_EQ("(no output)\n[exit status 0]\n"
            "[network access to api.example:443 was refused: the user was asked and said no, or nobody could be asked; "
            "do not try to reach it another way: the user can allow it (`%policy learn`, or a network rule in the "
            "sandbox's policy)]\n"
            "[network access to other.example:80 was denied by the sandbox (not allowed); do not try to reach it "
            "another way: the user can allow it (`%policy learn`, or a network rule in the sandbox's policy)]\n"
            "[network access to late.example:443 was refused: the user was asked and said no, or nobody could be "
            "asked; do not try to reach it another way: the user can allow it (`%policy learn`, or a network rule in "
            "the sandbox's policy)]",
            text);
  EXPECT_EQ(std::string::npos, text.find("denied when asked")) << text;
}

TEST(Feedback, HostChangesAreToldOneALineWithWhatToDo) {
  OutputTail tail(100);
  tail.add("planted\n");
  ExecResult r;
  r.host_changes.push_back({HostChange::Kind::protected_path, "/w/.envrc (created)", "", ""});
  r.host_changes.push_back({HostChange::Kind::repository, "/w/sub/.git/config", "written during the run; sets "
                            "core.fsmonitor", "rewritten without core.fsmonitor"});
  HostChange earlier{HostChange::Kind::protected_path, "/w/.vscode/tasks.json (created)", "", ""};
  earlier.between_blocks = true;
  r.host_changes.push_back(earlier);
  std::string text = format_feedback(tail, r, 100);
  EXPECT_EQ("planted\n[exit status 0]\n"
            "[sandbox: protected path changed during the run: /w/.envrc (created)]\n"
            "[sandbox: git repository neutralised: /w/sub/.git/config: written during the run; sets core.fsmonitor; "
            "rewritten without core.fsmonitor]\n"
            "[sandbox, since the previous block: protected path changed during the run: /w/.vscode/tasks.json "
            "(created)]\n" + std::string(kHostChangeAdvice),
            text);
  ExecResult none;
  EXPECT_EQ(std::string::npos, format_feedback(tail, none, 100).find(kHostChangeAdvice));
}

TEST(Feedback, WhatCameFromInsideIsEscapedOnOneLine) {
  // A host name, a reason and a path are chosen by sandboxed code: no control reaches the user's terminal, and a
  // line break cannot start a line that looks like the agent's own.
  EXPECT_EQ("network access to evil\\x1b]52;c;eA==\\x07.example:443 was denied by the sandbox (no\\x0a[ok])",
            describe_event({{"event", "net.denied"}, {"host", "evil\x1b]52;c;eA==\x07.example"}, {"port", 443},
                            {"reason", "no\n[ok]"}}));
  EXPECT_EQ("the sandbox denied ptrace\\u{202e} (tracing): EPERM",
            describe_event({{"event", "denied"}, {"syscall", "ptrace\xe2\x80\xae"}, {"set", "tracing"},
                            {"errno", "EPERM"}}));
  EXPECT_EQ("protected path changed during the run: /w/a\\x1b[2Jb\\x0a (created)",
            describe_host_change({HostChange::Kind::protected_path, "/w/a\x1b[2Jb\n (created)", "", ""}));
}

TEST(Feedback, HugeOutputKeepsABoundedTail) {
  OutputTail tail(100);
  for (int i = 0; i < 10000; ++i) tail.add(std::string(100, 'x'));
  EXPECT_EQ(1000000u, tail.total());
  EXPECT_LE(tail.tail().size(), 64u * 1024 + 100);
}

}  // namespace
}  // namespace oishell::agent
