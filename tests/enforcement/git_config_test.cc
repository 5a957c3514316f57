// The git config parser and sanitiser (base/git_config.h) that the repository guard rewrites configs with.
// Checked against git itself: what the parser reads must be what `git config --list` reads, a config git wrote
// must come out byte-identical, and what the sanitiser keeps must be exactly what git then reads.
#include "base/git_config.h"

#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "harness.h"

namespace oishell::test {
namespace {

// Git without the machine's or the user's config, and no repository around the test's directories.
const char kGitEnv[] =
    "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=Test GIT_AUTHOR_EMAIL=t@example.com "
    "GIT_COMMITTER_NAME=Test GIT_COMMITTER_EMAIL=t@example.com; "
    "unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_COMMON_DIR GIT_CONFIG GIT_CONFIG_PARAMETERS "
    "GIT_CONFIG_COUNT; ";

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Shell {
  int status = -1;
  std::string out;  // stdout only
};

Shell sh(const std::string& script) {
  Shell r;
  FILE* p = ::popen((std::string(kGitEnv) + script).c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = ::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool have_git() {
  static const bool ok = sh("git --version >/dev/null 2>&1").status == 0;
  return ok;
}

#define REQUIRE_GIT() \
  if (!have_git()) GTEST_SKIP() << "git is not installed: the comparison with git itself cannot run"

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// What git reads from `text` (`git config -f FILE -z --list`) as "name=value", or "name" for a bare key; nullopt
// when git refuses the file.
std::optional<std::vector<std::string>> git_reads(const std::string& text) {
  TempDir dir;
  std::string file = dir.write("config", text);
  Shell r = sh("git config -f " + shell_quote(file) + " -z --list 2>/dev/null");
  if (r.status != 0) return std::nullopt;
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = r.out.find('\0', start)) != std::string::npos; start = end + 1) {
    std::string item = r.out.substr(start, end - start);
    size_t nl = item.find('\n');
    out.push_back(nl == std::string::npos ? item : item.substr(0, nl) + "=" + item.substr(nl + 1));
  }
  return out;
}

// The same from our parse.
std::optional<std::vector<std::string>> we_read(const std::string& text) {
  auto parsed = parse_git_config(text);
  if (!parsed) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& section : parsed->sections) {
    for (const auto& entry : section.entries) {
      std::string name = git_config_name(section, entry);
      out.push_back(entry.value ? name + "=" + *entry.value : name);
    }
  }
  return out;
}

struct Case {
  const char* what;
  std::string text;
  std::vector<std::string> reads;
};

const std::vector<Case>& grammar_cases() {
  static const std::vector<Case> kCases = {
      {"section and key", "[core]\n\tbare = false\n", {"core.bare=false"}},
      {"names are case-insensitive, values are not", "[Core]\n\tBare = False\n", {"core.bare=False"}},
      {"quoted subsection keeps its case", "[remote \"Origin\"]\n\tURL = u\n", {"remote.Origin.url=u"}},
      {"deprecated dotted subsection is lowercased", "[remote.Origin]\n\turl = u\n", {"remote.origin.url=u"}},
      {"dotted with more dots", "[a.B.c]\n\tk = v\n", {"a.b.c.k=v"}},
      {"escapes in a subsection", "[a \"q\\\"b\\\\s\\x\"]\n\tk = v\n", {"a.q\"b\\sx.k=v"}},
      {"empty subsection", "[remote \"\"]\n\turl = u\n", {"remote..url=u"}},
      {"tab before the subsection", "[remote\t\"x\"]\n\turl = u\n", {"remote.x.url=u"}},
      {"bare key is true", "[core]\n\tbare\n", {"core.bare"}},
      {"bare key at the end without newline", "[core]\n\tbare", {"core.bare"}},
      {"no spaces around =", "[a]\nk=v\n", {"a.k=v"}},
      {"empty value", "[a]\n\tk =\n", {"a.k="}},
      {"key with digits and dashes", "[a]\n\tk-1x = v\n", {"a.k-1x=v"}},
      {"section name with digits and dashes", "[1a-b]\n\tk = v\n", {"1a-b.k=v"}},
      {"comments and blank lines", "# c\n; d\n\n  [a] # e\n\t; f\n\tk = v\n", {"a.k=v"}},
      {"comment after a value", "[a]\n\tk = v # c\n\tl = w ; d\n", {"a.k=v", "a.l=w"}},
      {"comment characters inside quotes", "[a]\n\tk = \"x;y#z\" ; c\n", {"a.k=x;y#z"}},
      {"leading and trailing space dropped", "[a]\n\tk =   v   \n", {"a.k=v"}},
      {"inner whitespace: one space per byte", "[a]\n\tk = a \t b\n", {"a.k=a   b"}},
      {"quoted spaces kept", "[a]\n\tk = \" x \"\n", {"a.k= x "}},
      {"quotes in the middle", "[a]\n\tk = a\"b c\"d\n", {"a.k=ab cd"}},
      {"escapes", "[a]\n\tk = \\\"\\\\\\t\\n\\b\n", {"a.k=\"\\\t\n\b"}},
      {"escapes inside quotes", "[a]\n\tk = \"\\t\\\"\"\n", {"a.k=\t\""}},
      {"tab inside quotes kept", "[a]\n\tk = \"x\ty\"\n", {"a.k=x\ty"}},
      {"line continuation", "[a]\n\tk = a\\\n  b\n", {"a.k=a  b"}},
      {"continuation inside quotes", "[a]\n\tk = \"a\\\nb\"\n", {"a.k=ab"}},
      {"backslash at the very end", "[a]\n\tk = v\\", {"a.k=v"}},
      {"entry on the header's line", "[a \"x\"] k = v\n", {"a.x.k=v"}},
      {"two headers on a line", "[a] [b] k = v\n", {"b.k=v"}},
      {"repeated sections and keys", "[a]\n\tk = 1\n[b]\n\tk = 2\n[a]\n\tk = 3\n", {"a.k=1", "b.k=2", "a.k=3"}},
      {"CRLF line ends", "[a]\r\n\tk = v\r\n", {"a.k=v"}},
      {"UTF-8 byte order mark", "\xEF\xBB\xBF[a]\n\tk = v\n", {"a.k=v"}},
      {"non-ASCII and control bytes are literal", "[a]\n\tk = \xC3\xA9\v\f\n", {"a.k=\xC3\xA9\v\f"}},
      {"empty file", "", {}},
      {"empty section", "[a]\n", {}},
  };
  return kCases;
}

TEST(GitConfigParse, EveryGrammarFeatureReadsAsGitReadsIt) {
  for (const auto& c : grammar_cases()) {
    SCOPED_TRACE(c.what);
    auto ours = we_read(c.text);
    ASSERT_TRUE(ours.has_value()) << parse_git_config(c.text).status().message();
    EXPECT_EQ(c.reads, *ours);
    if (have_git()) {
      EXPECT_EQ(c.reads, git_reads(c.text));
    }
  }
  if (!have_git()) GTEST_SKIP() << "git is not installed: parsed, but not compared with git";
}

TEST(GitConfigParse, NamesKeepTheirSpellingAndSubsectionsTheirForm) {
  auto parsed = parse_git_config("[Branch \"Main\"]\n\tpushRemote = o\n[remote.x]\n\turl = u\n");
  ASSERT_TRUE(parsed.is_ok());
  ASSERT_EQ(2u, parsed->sections.size());
  EXPECT_EQ("Branch", parsed->sections[0].name);
  EXPECT_EQ("Main", parsed->sections[0].subsection);
  EXPECT_FALSE(parsed->sections[0].dotted);
  EXPECT_EQ("pushRemote", parsed->sections[0].entries[0].key);
  EXPECT_EQ("remote", parsed->sections[1].name);
  EXPECT_EQ("x", parsed->sections[1].subsection);
  EXPECT_TRUE(parsed->sections[1].dotted);
}

struct Bad {
  const char* what;
  std::string text;
  bool git_refuses;  // false: git reads something, but not in a way this parser mirrors (it is stricter)
};

TEST(GitConfigParse, WhatItDoesNotUnderstandExactlyIsUnparseable) {
  const std::vector<Bad> cases = {
      {"unterminated header", "[core\n", true},
      {"unterminated header at the end", "[core", true},
      {"space before ]", "[core ]\n", true},
      {"empty header", "[]\n", true},
      {"bad character in a section name", "[co_re]\n", true},
      {"unterminated subsection", "[core \"x]\n", true},
      {"no ] after the subsection", "[core \"x\"\n", true},
      {"newline in a subsection", "[core \"x\\\n\"]\n", true},
      {"key starting with a digit", "[a]\n\t1k = v\n", true},
      {"underscore in a key", "[a]\n\tk_x = v\n", true},
      {"unterminated quoted value", "[a]\n\tk = \"x\n", true},
      {"newline inside quotes", "[a]\n\tk = \"a\r\n\"\n", true},
      {"unknown escape", "[a]\n\tk = a\\q\n", true},
      {"bare key followed by a comment", "[a]\n\tk # c\n", true},
      {"partial byte order mark", "\xEF\xBB[a]\n", true},
      // Git reads these; this parser refuses them rather than mirror how.
      {"entry before any section", "k = v\n", false},
      {"NUL byte (git cuts the value at it)", std::string("[a]\n\tk = x\0y\n", 13), false},
      {"lone carriage return (git reads it as a space)", "[a]\n\tk = x\ry\n", false},
      {"empty part in a dotted header", "[a.]\n\tk = v\n", false},
      {"leading dot in a header", "[.a]\n\tk = v\n", false},
      {"double dot in a header", "[a..b]\n\tk = v\n", false},
      {"dot before a quoted subsection", "[a.b \"c\"]\n\tk = v\n", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto parsed = parse_git_config(c.text);
    EXPECT_FALSE(parsed.is_ok());
    if (!parsed.is_ok()) {
      EXPECT_EQ(0u, parsed.status().message().rfind("line ", 0)) << parsed.status().message();
    }
    SanitizedGitConfig s = sanitize_git_config(c.text);
    EXPECT_EQ("", s.text);
    EXPECT_TRUE(s.changed);
    EXPECT_FALSE(s.error.empty());
    ASSERT_EQ(1u, s.dropped.size());
    EXPECT_EQ("everything (" + s.error + ")", s.dropped[0]);
    if (have_git()) {
      EXPECT_EQ(c.git_refuses, !git_reads(c.text).has_value());
    }
  }
}

TEST(GitConfigParse, ErrorsNameTheLine) {
  auto parsed = parse_git_config("[core]\n\tbare = false\n\tk = \"open\n");
  ASSERT_FALSE(parsed.is_ok());
  EXPECT_EQ("line 3: unterminated quoted value", parsed.status().message());
}

TEST(GitConfigSerialize, WritesWhatGitWrites) {
  GitConfig config;
  config.sections.push_back({"core", std::nullopt, false, {{"bare", "false"}, {"flag", std::nullopt}}});
  config.sections.push_back({"remote", "o\"r\\g", false, {{"url", " lead"}, {"pushurl", "a#b"}, {"x", "t "}}});
  config.sections.push_back({"user", std::nullopt, false, {{"name", "tab\tnl\nq\"b\\"}, {"email", ""}}});
  config.sections.push_back({"Branch", "Main", true, {}});
  EXPECT_EQ(
      "[core]\n\tbare = false\n\tflag\n"
      "[remote \"o\\\"r\\\\g\"]\n\turl = \" lead\"\n\tpushurl = \"a#b\"\n\tx = \"t \"\n"
      "[user]\n\tname = tab\\tnl\\nq\\\"b\\\\\n\temail = \n"
      "[Branch.Main]\n",
      serialize_git_config(config));
}

// A config written by git itself, read back from the repository `repo` made by `script`.
std::string config_made_by(const std::string& script) {
  TempDir dir;
  Shell r = sh("cd " + shell_quote(dir.path()) + " && git init -q -b main r && cd r && " + script + " >/dev/null 2>&1");
  EXPECT_EQ(0, r.status) << script;
  return read_file(dir.path() + "/r/.git/config");
}

TEST(GitConfigSanitize, ConfigsGitWritesAreLeftAlone) {
  REQUIRE_GIT();
  const std::vector<std::string> scripts = {
      "true",  // git init
      "git remote add origin https://example.com/r.git && git config user.name 'A U Thor' && "
      "git config user.email a@example.com",
      "git remote add up /srv/up.git && git config remote.up.pushurl ssh://h/up && "
      "git config --add remote.up.fetch '+refs/tags/*:refs/tags/*' && git config remote.up.prune true && "
      "git config branch.main.remote up && git config branch.main.merge refs/heads/main && "
      "git config branch.main.rebase true && git config branch.main.description 'with \"quotes\"; and # signs'",
      "git config core.ignoreCase true && git config core.autocrlf input && git config init.defaultBranch main && "
      "git config pull.rebase false && git config push.default simple && git config fetch.prune true && "
      "git config submodule.lib.url ../lib.git && git config submodule.lib.active true && "
      "git config user.name ' Lead and trail ' && git config Branch.Topic.remote origin",
      "git config user.name \"$(printf 'tab\\there\\nnewline back\\\\slash')\"",
  };
  for (const auto& script : scripts) {
    SCOPED_TRACE(script);
    std::string text = config_made_by(script);
    ASSERT_NE("", text);
    SanitizedGitConfig s = sanitize_git_config(text);
    EXPECT_FALSE(s.changed) << "in:\n" << text << "out:\n" << s.text;
    EXPECT_EQ(text, s.text);
    EXPECT_TRUE(s.dropped.empty());
  }
}

TEST(GitConfigSanitize, ASubmoduleAndACloneLeaveOnlyCoreWorktreeToDrop) {
  REQUIRE_GIT();
  TempDir dir;
  Shell r = sh("cd " + shell_quote(dir.path()) +
               " && git init -q -b main lib && git -C lib commit -q --allow-empty -m i"
               " && git clone -q lib clone && git init -q -b main super && cd super"
               " && git -c protocol.file.allow=always submodule add -q ../lib m >/dev/null 2>&1");
  ASSERT_EQ(0, r.status);
  // The clone's config (remote origin, branch main) and the superproject's (submodule.m.*) are kept as they are.
  for (const char* clean : {"/clone/.git/config", "/super/.git/config"}) {
    std::string text = read_file(dir.path() + clean);
    SanitizedGitConfig s = sanitize_git_config(text);
    EXPECT_FALSE(s.changed) << clean << ":\n" << text;
  }
  // The submodule's git dir points its work tree back with core.worktree, which is not allowed.
  std::string text = read_file(dir.path() + "/super/.git/modules/m/config");
  SanitizedGitConfig s = sanitize_git_config(text);
  EXPECT_TRUE(s.changed);
  EXPECT_EQ(std::vector<std::string>{"core.worktree"}, s.dropped);
}

// Each of these makes git run a program, read config or hooks from elsewhere, or send fetches and pushes elsewhere.
TEST(GitConfigSanitize, EveryDroppedClassIsDropped) {
  const std::vector<std::pair<std::string, std::string>> dropped = {
      {"[core]\n\tfsmonitor = touch /tmp/x\n", "core.fsmonitor"},
      {"[core]\n\thooksPath = /tmp/hooks\n", "core.hookspath"},
      {"[core]\n\tpager = sh -c x\n", "core.pager"},
      {"[core]\n\teditor = x\n", "core.editor"},
      {"[core]\n\tsshCommand = x\n", "core.sshcommand"},
      {"[core]\n\taskPass = x\n", "core.askpass"},
      {"[core]\n\tgitProxy = x\n", "core.gitproxy"},
      {"[core]\n\tworktree = /etc\n", "core.worktree"},
      {"[core]\n\tattributesFile = /tmp/a\n", "core.attributesfile"},
      {"[core]\n\texcludesFile = /tmp/a\n", "core.excludesfile"},
      {"[sequence]\n\teditor = x\n", "sequence.editor"},
      {"[pager]\n\tlog = x\n", "pager.log"},
      {"[diff]\n\texternal = x\n", "diff.external"},
      {"[diff \"bin\"]\n\ttextconv = x\n", "diff.bin.textconv"},
      {"[diff \"bin\"]\n\tcommand = x\n", "diff.bin.command"},
      {"[filter \"lfs\"]\n\tclean = x\n\tsmudge = y\n\tprocess = z\n", "filter.lfs.clean"},
      {"[merge \"m\"]\n\tdriver = x\n", "merge.m.driver"},
      {"[alias]\n\tst = !touch /tmp/x\n", "alias.st"},
      {"[credential]\n\thelper = !x\n", "credential.helper"},
      {"[credential \"https://h\"]\n\thelper = x\n", "credential.https://h.helper"},
      {"[gpg]\n\tprogram = x\n", "gpg.program"},
      {"[gpg \"ssh\"]\n\tprogram = x\n", "gpg.ssh.program"},
      {"[include]\n\tpath = /tmp/evil\n", "include.path"},
      {"[includeIf \"gitdir:/\"]\n\tpath = /tmp/evil\n", "includeif.gitdir:/.path"},
      {"[url \"https://evil/\"]\n\tinsteadOf = https://github.com/\n", "url.https://evil/.insteadof"},
      {"[url \"https://evil/\"]\n\tpushInsteadOf = https://github.com/\n", "url.https://evil/.pushinsteadof"},
      {"[remote \"o\"]\n\tuploadpack = x\n", "remote.o.uploadpack"},
      {"[remote \"o\"]\n\treceivepack = x\n", "remote.o.receivepack"},
      {"[remote \"o\"]\n\tvcs = x\n", "remote.o.vcs"},
      {"[remote \"o\"]\n\tproxy = http://evil\n", "remote.o.proxy"},
      {"[submodule \"m\"]\n\tupdate = !x\n", "submodule.m.update"},
      {"[uploadpack]\n\tpackObjectsHook = x\n", "uploadpack.packobjectshook"},
      {"[protocol \"ext\"]\n\tallow = always\n", "protocol.ext.allow"},
      {"[http]\n\tproxy = http://evil\n", "http.proxy"},
      {"[safe]\n\tdirectory = *\n", "safe.directory"},
      {"[extensions]\n\tworktreeConfig = true\n", "extensions.worktreeconfig"},
      // An allowed key under a subsection, or a per-name key without one, is another key.
      {"[core \"x\"]\n\tfilemode = true\n", "core.x.filemode"},
      {"[remote]\n\turl = u\n", "remote.url"},
      {"[user \"x\"]\n\tname = n\n", "user.x.name"},
  };
  for (const auto& [text, name] : dropped) {
    SCOPED_TRACE(text);
    std::string full = "[core]\n\tbare = false\n" + text + "[user]\n\tname = kept\n";
    SanitizedGitConfig s = sanitize_git_config(full);
    EXPECT_TRUE(s.changed);
    ASSERT_FALSE(s.dropped.empty());
    EXPECT_EQ(name, s.dropped[0]);
    EXPECT_TRUE(s.error.empty());
    // The neighbours stay.
    EXPECT_NE(std::string::npos, s.text.find("[core]\n\tbare = false\n")) << s.text;
    EXPECT_NE(std::string::npos, s.text.find("[user]\n\tname = kept\n")) << s.text;
  }
}

TEST(GitConfigSanitize, EmptiedSectionsGoAndEmptySectionsStay) {
  SanitizedGitConfig s = sanitize_git_config(
      "[core]\n\tbare = false\n\tfsmonitor = x\n\tfsmonitor = y\n[alias]\n\tst = status\n[user]\n[core]\n\teditor = "
      "vi\n");
  EXPECT_EQ("[core]\n\tbare = false\n[user]\n", s.text);
  EXPECT_EQ((std::vector<std::string>{"core.fsmonitor", "alias.st", "core.editor"}), s.dropped);
  EXPECT_TRUE(s.changed);
}

TEST(GitConfigSanitize, ALayoutGitDoesNotWriteIsRewrittenWithNothingDropped) {
  SanitizedGitConfig s = sanitize_git_config("# mine\n[core]  bare=false   ; why\n[remote.up]\n  url = \"u\"\n");
  EXPECT_TRUE(s.changed);
  EXPECT_TRUE(s.dropped.empty());
  EXPECT_EQ("[core]\n\tbare = false\n[remote.up]\n\turl = u\n", s.text);
}

TEST(GitConfigSanitize, IsIdempotent) {
  std::vector<std::string> inputs;
  for (const auto& c : grammar_cases()) inputs.push_back(c.text);
  inputs.push_back("[core]\n\tfsmonitor = x\n\tbare\n[remote \"a\\\"b\"]\n\turl = \" x;y \"\n\tvcs = z\n");
  inputs.push_back("[a]\n\tk = \"unterminated\n");
  for (const auto& text : inputs) {
    SCOPED_TRACE(text);
    SanitizedGitConfig once = sanitize_git_config(text);
    SanitizedGitConfig twice = sanitize_git_config(once.text);
    EXPECT_FALSE(twice.changed);
    EXPECT_EQ(once.text, twice.text);
    EXPECT_TRUE(twice.dropped.empty());
  }
}

// What the sanitiser keeps is what git reads from its output: nothing more, spelled as git names it.
TEST(GitConfigSanitize, GitReadsExactlyWhatWasKept) {
  REQUIRE_GIT();
  std::string text =
      "[core]\n  bare\n\tfsmonitor = \"touch x; false\"\n\tfileMode = true\n"
      "[remote \"Up Stream\"]\n\turl = \" spaced \\\"url\\\" \"\n\tfetch = a\\\n b\n\tuploadpack = evil\n"
      "[Branch.Main]\n\tremote = Up Stream\n[include]\n\tpath = x\n[user]\n\tname = tab\\there # c\n";
  SanitizedGitConfig s = sanitize_git_config(text);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(
      (std::vector<std::string>{"core.bare", "core.filemode=true", "remote.Up Stream.url= spaced \"url\" ",
                                "remote.Up Stream.fetch=a b", "branch.main.remote=Up Stream", "user.name=tab\there"}),
      git_reads(s.text));
  EXPECT_EQ(we_read(s.text), git_reads(s.text));
}

}  // namespace
}  // namespace oishell::test
