// Variables and normalisation, in the one place they happen (policy/paths.h).
#include <gtest/gtest.h>

#include "policy/paths.h"

namespace oishell::policy {
namespace {

const PathVars kVars{"/home/u/proj", "/home/u/proj", "/home/u", "/var/tmp/u"};

std::string expand(const std::string& text, PathRole role = PathRole::absolute) {
  auto r = expand_path(text, role, kVars);
  return r ? *r : "ERROR: " + r.status().message();
}

TEST(Paths, Variables) {
  EXPECT_EQ("/home/u", expand("~"));
  EXPECT_EQ("/home/u/.ssh", expand("~/.ssh"));
  EXPECT_EQ("/home/u/.ssh", expand("$HOME/.ssh"));
  EXPECT_EQ("/home/u/.ssh", expand("${HOME}/.ssh"));
  EXPECT_EQ("/home/u/proj/build", expand("$WORKSPACE/build"));
  EXPECT_EQ("/var/tmp/u/cache", expand("$TMPDIR/cache"));
  EXPECT_EQ("/var/tmp/u", expand("$TMPDIR"));
}

TEST(Paths, Normalisation) {
  EXPECT_EQ("/usr/share", expand("/usr//share/"));
  EXPECT_EQ("/usr/share", expand("/usr/./share/."));
  EXPECT_EQ("/home/u/x", expand("~//x/"));
  EXPECT_EQ("/a", normalise_path("///a///"));
  EXPECT_EQ("/", normalise_path("/"));
}

TEST(Paths, Refusals) {
  EXPECT_EQ("ERROR: `..` is not allowed in policy paths (write the path without `..`)", expand("/usr/../etc"));
  EXPECT_EQ("ERROR: `..` is not allowed in policy paths (write the path without `..`)", expand("~/.."));
  EXPECT_EQ("ERROR: unknown variable `$USER` (the variables are $WORKSPACE, $HOME, $TMPDIR and ~)", expand("$USER/x"));
  EXPECT_EQ("ERROR: a variable must be followed by `/` or end the path", expand("${HOME}x"));
  EXPECT_EQ("ERROR: unclosed `${`", expand("${HOME/x"));
  EXPECT_EQ("ERROR: empty path", expand(""));
  EXPECT_EQ("ERROR: control character in path", expand("/a\nb"));
  EXPECT_EQ("ERROR: `/` would expose the whole host (list the directories needed)", expand("//"));
  EXPECT_TRUE(expand("relative").starts_with("ERROR: relative path where an absolute one is needed"));
}

TEST(Paths, Roles) {
  EXPECT_EQ("/home/u/proj/sub", expand("sub", PathRole::workspace));
  EXPECT_EQ("/home/u/proj", expand(".", PathRole::workspace));
  EXPECT_EQ("/srv/p", expand("/srv/p/", PathRole::workspace));
  EXPECT_TRUE(expand("$WORKSPACE", PathRole::workspace).starts_with("ERROR"));
  EXPECT_EQ("/home/u/proj/.git/hooks", expand(".git/hooks", PathRole::workspace_relative));
  EXPECT_EQ("/home/u/proj/.envrc", expand("$WORKSPACE/.envrc", PathRole::workspace_relative));
  EXPECT_TRUE(expand("/etc/passwd", PathRole::workspace_relative).starts_with("ERROR"));
  EXPECT_TRUE(expand("~/.envrc", PathRole::workspace_relative).starts_with("ERROR"));
}

TEST(Paths, UnsetVariablesAreErrors) {
  PathVars empty{"/c", "", "", ""};
  auto r = expand_path("~/.ssh", PathRole::absolute, empty);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ("$HOME is not set to an absolute path here", r.status().message());
}

TEST(Paths, Within) {
  EXPECT_TRUE(path_within("/a/b", "/a"));
  EXPECT_TRUE(path_within("/a", "/a"));
  EXPECT_FALSE(path_within("/ab", "/a"));
  EXPECT_TRUE(path_within("/x", "/"));
}

}  // namespace
}  // namespace oishell::policy
