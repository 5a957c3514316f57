// PrivateFile (agent/host/private_file.h): a file only its user reads, in a directory of its own, gone with its owner.
#include "agent/host/private_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "agent/host/atomic_file.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

// $TMPDIR set for one test, and put back as it was.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& value) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    ::setenv("TMPDIR", value.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (old_) ::setenv("TMPDIR", old_->c_str(), 1);
    else ::unsetenv("TMPDIR");
  }

 private:
  std::optional<std::string> old_;
};

TEST(PrivateFile, ModesContentAndRemoval) {
  test::TempDir tmp;
  ScopedTmpdir scoped(tmp.path());
  std::string path, dir;
  {
    auto file = PrivateFile::create("interpreter-policy", "profile-policy.yaml", "version: 1\n");
    ASSERT_TRUE(file) << file.status().message();
    path = file->path();
    dir = path.substr(0, path.rfind('/'));
    EXPECT_EQ(tmp.path() + "/interpreter-policy-", dir.substr(0, tmp.path().size() + 20));
    struct stat st {};
    ASSERT_EQ(0, ::stat(path.c_str(), &st));
    EXPECT_EQ(0600u, st.st_mode & 0777);
    ASSERT_EQ(0, ::stat(dir.c_str(), &st));
    EXPECT_EQ(0700u, st.st_mode & 0777);
    EXPECT_EQ("version: 1\n", read_file(path).value());
    PrivateFile moved = std::move(*file);  // the new owner removes it, once
    EXPECT_EQ(path, moved.path());
    EXPECT_EQ("", file->path());
  }
  EXPECT_NE(0, ::access(path.c_str(), F_OK));
  EXPECT_NE(0, ::access(dir.c_str(), F_OK));
}

TEST(PrivateFile, AnUnusableTmpdirIsAnErrorNamingTheCall) {
  ScopedTmpdir scoped("/nonexistent-oishell-dir");
  auto file = PrivateFile::create("interpreter-policy", "p.yaml", "x");
  ASSERT_FALSE(file);
  EXPECT_NE(std::string::npos, file.status().message().find("mkdtemp(\"/nonexistent-oishell-dir/interpreter-policy-"))
      << file.status().message();
}

}  // namespace
}  // namespace oishell::agent
