// The file operations `oishell mcp`'s file tools run inside the sandbox (runtime/mcp/fs_ops.h), here on the host:
// what each answers, and the error object (call, errno) that the server turns into a sentence naming the rule.
// That the sandbox decides what they may touch is tested end to end (mcp_e2e.mjs: a hidden file, /etc/shadow and
// a read-only system directory refused, the workspace beside them allowed).
#include "runtime/mcp/fs_ops.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/mcp/scratch_dir.h"

namespace oishell::mcp::fs {
namespace {

using nlohmann::json;

class FsOpsTest : public ::testing::Test {
 protected:
  std::string put(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  test::ScratchDir scratch_;
  const std::string dir_ = scratch_.path();
};

std::string error_errno(const json& j) { return j.contains("error") ? j["error"].value("errno", "") : ""; }

TEST_F(FsOpsTest, ReadsTextWholeOrInPartsAndOtherBytesAsBase64) {
  const std::string path = put("a.txt", "héllo\nworld\n");
  json whole = read_file(path, 0, kMaxReadBytes);
  EXPECT_EQ("héllo\nworld\n", whole.value("content", ""));
  EXPECT_EQ("utf-8", whole.value("encoding", ""));
  EXPECT_FALSE(whole.value("truncated", true));
  json part = read_file(path, 7, 5);
  EXPECT_EQ("world", part.value("content", ""));
  EXPECT_TRUE(part.value("truncated", false));
  const std::string bin = put("b.bin", std::string("\x89PNG\0\xff", 6));
  json b = read_file(bin, 0, 100);
  EXPECT_EQ("base64", b.value("encoding", ""));
  EXPECT_EQ("iVBORwD/", b.value("content", ""));
}

TEST_F(FsOpsTest, ReadRefusesDirectoriesMissingFilesAndFifosWithoutBlocking) {
  EXPECT_EQ("EISDIR", error_errno(read_file(dir_, 0, 10)));
  json missing = read_file(dir_ + "/none", 0, 10);
  EXPECT_EQ("ENOENT", error_errno(missing));
  EXPECT_EQ("open", missing["error"].value("call", ""));
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(0, ::mkfifo(fifo.c_str(), 0600));
  json f = read_file(fifo, 0, 10);  // no writer: a blocking open would hang here
  EXPECT_EQ("not_regular", f["error"].value("kind", ""));
}

TEST_F(FsOpsTest, AFileItsModeRefusesIsEaccesUnlessTheCallerOverridesModes) {
  const std::string path = put("closed.txt", "x");
  ASSERT_EQ(0, ::chmod(path.c_str(), 0));
  json r = read_file(path, 0, 10);
  if (::geteuid() == 0) {
    // Root's CAP_DAC_OVERRIDE reads it on the host; inside the sandbox a root caller is an unused id outside.
    EXPECT_EQ("x", r.value("content", "")) << r.dump();
  } else {
    EXPECT_EQ("EACCES", error_errno(r)) << r.dump();
  }
  const std::string open = put("open.txt", "y");
  EXPECT_EQ("y", read_file(open, 0, 10).value("content", ""));
}

TEST_F(FsOpsTest, WriteCreatesReplacesAndAppends) {
  const std::string path = dir_ + "/w.txt";
  json created = write_file(path, "one\n", false);
  EXPECT_TRUE(created.value("created", false));
  EXPECT_EQ(4, created.value("bytes", 0));
  json replaced = write_file(path, "two\n", false);
  EXPECT_FALSE(replaced.value("created", true));
  EXPECT_EQ("two\n", slurp(path));
  (void)write_file(path, "three\n", true);
  EXPECT_EQ("two\nthree\n", slurp(path));
  EXPECT_EQ("ENOENT", error_errno(write_file(dir_ + "/no/such/dir/x", "x", false)));
}

TEST_F(FsOpsTest, EditReplacesExactlyOnceUnlessAskedForAll) {
  const std::string path = put("e.txt", "a b a c\n");
  json ambiguous = edit_file(path, "a", "z", false);
  EXPECT_EQ("ambiguous", ambiguous["error"].value("kind", ""));
  EXPECT_NE(std::string::npos, ambiguous["error"].value("message", "").find("2 times"));
  EXPECT_EQ("a b a c\n", slurp(path));  // untouched
  EXPECT_EQ(1, edit_file(path, "b a", "B A", false).value("replacements", 0));
  EXPECT_EQ("a B A c\n", slurp(path));
  EXPECT_EQ(1, edit_file(path, "a", "x", true).value("replacements", 0));
  EXPECT_EQ("x B A c\n", slurp(path));
  EXPECT_EQ("not_found", edit_file(path, "nothing", "y", false)["error"].value("kind", ""));
  EXPECT_EQ("invalid", edit_file(path, "", "y", false)["error"].value("kind", ""));
  EXPECT_EQ("ENOENT", error_errno(edit_file(dir_ + "/none", "a", "b", false)));
}

TEST_F(FsOpsTest, ListIsSortedWithTypesSizesAndDepth) {
  put("b.txt", "12345");
  ASSERT_EQ(0, ::mkdir((dir_ + "/a").c_str(), 0755));
  put("a/inner.txt", "x");
  ASSERT_EQ(0, ::symlink("b.txt", (dir_ + "/link").c_str()));
  json one = list_files(dir_, 1);
  ASSERT_EQ(3u, one["entries"].size()) << one.dump();
  EXPECT_EQ("a", one["entries"][0].value("path", ""));
  EXPECT_EQ("directory", one["entries"][0].value("type", ""));
  EXPECT_EQ("b.txt", one["entries"][1].value("path", ""));
  EXPECT_EQ(5, one["entries"][1].value("size", 0));
  EXPECT_EQ("symlink", one["entries"][2].value("type", ""));
  json two = list_files(dir_, 2);
  ASSERT_EQ(4u, two["entries"].size());
  EXPECT_EQ("a/inner.txt", two["entries"][1].value("path", ""));
  EXPECT_EQ("ENOTDIR", error_errno(list_files(dir_ + "/b.txt", 1)));
}

TEST(FsOpsUtf8, StrictValidation) {
  EXPECT_TRUE(valid_utf8("plain"));
  EXPECT_TRUE(valid_utf8("é ✓ \xF0\x9F\x98\x80"));
  EXPECT_FALSE(valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(valid_utf8("\xE2\x9C"));          // cut short
  EXPECT_FALSE(valid_utf8("\xFF"));
}

}  // namespace
}  // namespace oishell::mcp::fs
