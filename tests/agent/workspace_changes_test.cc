// What a block changed in the workspace (agent/sandbox/workspace_changes.h): snapshots compared, and unified diffs that
// patch(1) applies to the old text to give exactly the new.
#include "agent/sandbox/workspace_changes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> described(const std::vector<FileChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(describe_change(c));
  return out;
}

TEST(WorkspaceChanges, CreatedModifiedDeletedInPathOrder) {
  TempDir dir;
  const std::string w = dir.path();
  write(w + "/keep.txt", "same\n");
  write(w + "/edit.py", "a = 1\n");
  write(w + "/gone.log", "old\n");
  const auto before = WorkspaceSnapshot::take(w);
  write(w + "/edit.py", "a = 2\n");
  fs::remove(w + "/gone.log");
  write(w + "/sub/new.txt", "hello\n");
  const auto changes = workspace_changes(before, WorkspaceSnapshot::take(w));
  EXPECT_EQ(described(changes),
            (std::vector<std::string>{"modified edit.py", "deleted gone.log", "created sub/new.txt"}));
  EXPECT_EQ(changes[0].old_text, "a = 1\n");
  EXPECT_EQ(changes[0].new_text, "a = 2\n");
  EXPECT_EQ(changes[1].old_text, "old\n");
  EXPECT_FALSE(changes[1].new_text.has_value());
  EXPECT_FALSE(changes[2].old_text.has_value());
  EXPECT_EQ(changes[2].new_size, 6u);
  EXPECT_EQ(before.incomplete(), "");
}

TEST(WorkspaceChanges, NothingChangedIsNoChange) {
  TempDir dir;
  write(dir.path() + "/a.txt", "x\n");
  const auto before = WorkspaceSnapshot::take(dir.path());
  EXPECT_TRUE(workspace_changes(before, WorkspaceSnapshot::take(dir.path())).empty());
}

TEST(WorkspaceChanges, GitMetadataAndLinksAreNotFollowed) {
  TempDir dir;
  TempDir outside;
  const std::string w = dir.path();
  write(outside.path() + "/secret.txt", "outside\n");
  const auto before = WorkspaceSnapshot::take(w);
  write(w + "/.git/HEAD", "ref: refs/heads/main\n");
  fs::create_directory_symlink(outside.path(), w + "/link");
  write(w + "/real.txt", "in\n");
  const auto after = WorkspaceSnapshot::take(w);
  // Without the rules: ".git/HEAD" and "link/secret.txt" would be listed too.
  EXPECT_EQ(described(workspace_changes(before, after)), (std::vector<std::string>{"created real.txt"}));
}

TEST(WorkspaceChanges, BinaryAndLargeFilesAreSummarised) {
  TempDir dir;
  const std::string w = dir.path();
  ChangeLimits limits;
  limits.max_file_bytes = 100;
  const auto before = WorkspaceSnapshot::take(w, limits);
  write(w + "/blob.bin", std::string("PNG\0\x01\x02", 6));
  write(w + "/big.txt", std::string(200, 'x'));
  write(w + "/small.txt", "fits\n");
  const auto changes = workspace_changes(before, WorkspaceSnapshot::take(w, limits));
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_TRUE(changes[0].too_large);  // big.txt
  EXPECT_FALSE(changes[0].new_text.has_value());
  EXPECT_TRUE(changes[1].binary);  // blob.bin
  EXPECT_FALSE(changes[1].new_text.has_value());
  EXPECT_EQ(changes[2].new_text, "fits\n");
  EXPECT_EQ(unified_diff(changes[0]), "File big.txt created (200 bytes): too large to show\n");
  EXPECT_EQ(unified_diff(changes[1]), "Binary file blob.bin created (6 bytes)\n");
}

TEST(WorkspaceChanges, LargeFileChangeSeenBySizeOrTime) {
  TempDir dir;
  ChangeLimits limits;
  limits.max_file_bytes = 10;
  write(dir.path() + "/big.txt", std::string(50, 'a'));
  const auto before = WorkspaceSnapshot::take(dir.path(), limits);
  write(dir.path() + "/big.txt", std::string(60, 'a'));
  const auto changes = workspace_changes(before, WorkspaceSnapshot::take(dir.path(), limits));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(unified_diff(changes[0]), "File big.txt changed (50 bytes -> 60 bytes): too large to show\n");
}

TEST(WorkspaceChanges, FileBoundStopsTheWalkAndSaysSo) {
  TempDir dir;
  for (int i = 0; i < 5; ++i) write(dir.path() + "/f" + std::to_string(i), "x\n");
  ChangeLimits limits;
  limits.max_files = 3;
  const auto before = WorkspaceSnapshot::take(dir.path(), limits);
  EXPECT_EQ(before.incomplete(), "more than 3 files: the rest not compared");
  write(dir.path() + "/f0", "changed\n");
  write(dir.path() + "/e", "new\n");  // sorts first: pushes f2 out of the walk
  const auto changes = workspace_changes(before, WorkspaceSnapshot::take(dir.path(), limits));
  // f0 seen by both walks; "e" and "f2" each by one only, so neither is said to be created or deleted.
  EXPECT_EQ(described(changes), (std::vector<std::string>{"modified f0"}));
}

FileChange text_change(const std::string& old_text, const std::string& new_text) {
  FileChange c;
  c.path = "f.txt";
  c.old_text = old_text;
  c.new_text = new_text;
  return c;
}

TEST(UnifiedDiff, OneLineChangedWithContext) {
  EXPECT_EQ(unified_diff(text_change("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n")),
            "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, CreatedAndDeletedFiles) {
  FileChange created;
  created.kind = FileChange::Kind::created;
  created.path = "n.txt";
  created.new_text = "a\nb\n";
  EXPECT_EQ(unified_diff(created), "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  FileChange deleted;
  deleted.kind = FileChange::Kind::deleted;
  deleted.path = "d.txt";
  deleted.old_text = "z\n";
  EXPECT_EQ(unified_diff(deleted), "--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n");
}

TEST(UnifiedDiff, MissingFinalNewlineIsMarked) {
  EXPECT_EQ(unified_diff(text_change("a\nb", "a\nb\n")),
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
}

TEST(UnifiedDiff, CutAtTheBoundAndSaysSo) {
  std::string big;
  for (int i = 0; i < 5000; ++i) big += "line " + std::to_string(i) + "\n";
  const std::string diff = unified_diff(text_change("", big), 3, 1024);
  EXPECT_LT(diff.size(), 1200u);
  EXPECT_TRUE(diff.ends_with("... (diff cut at 1 KiB)\n")) << diff;
}

// patch(1) applies every diff to the old text and gets exactly the new one: random edits of random texts,
// including ones past the edit cap (unrelated texts) and ones without a final newline.
TEST(UnifiedDiff, PatchReproducesTheNewText) {
  std::mt19937 random(17);
  auto text = [&](int lines, bool final_newline) {
    std::string t;
    for (int i = 0; i < lines; ++i) t += "l" + std::to_string(random() % 8) + (i + 1 < lines || final_newline ? "\n" : "");
    return t;
  };
  TempDir dir;
  for (int round = 0; round < 60; ++round) {
    const std::string old_text = text(static_cast<int>(random() % 40), random() % 4 != 0);
    std::string new_text;
    if (round % 10 == 9) {
      new_text = text(3000, true);  // past the cap of 2000 edits
    } else {
      std::istringstream in(old_text);
      std::string line;
      while (std::getline(in, line)) {
        const auto r = random() % 10;
        if (r == 0) continue;                             // removed
        if (r == 1) new_text += "new" + std::to_string(random() % 3) + "\n";  // inserted
        new_text += line + (in.eof() && !old_text.ends_with('\n') && random() % 2 ? "" : "\n");
      }
      if (random() % 3 == 0) new_text += "tail";
    }
    if (old_text.empty() || old_text == new_text) continue;  // patch(1) wants an existing, changed file
    write(dir.path() + "/f.txt", old_text);
    write(dir.path() + "/d.patch", unified_diff(text_change(old_text, new_text), 3, 1 << 30));
    const std::string command = "cd '" + dir.path() + "' && patch -s -p1 -i d.patch >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << "round " << round << "\n" << read(dir.path() + "/d.patch");
    ASSERT_EQ(read(dir.path() + "/f.txt"), new_text) << "round " << round << "\n" << read(dir.path() + "/d.patch");
  }
}

}  // namespace
}  // namespace oishell::agent
