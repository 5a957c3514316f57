#pragma once
// A fresh directory under the system's temporary directory for one test, removed with everything in it after.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace oishell::mcp::test {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/oishell-mcp-XXXXXX";
    if (::mkdtemp(pattern.data())) path_ = pattern;
    EXPECT_FALSE(path_.empty()) << "mkdtemp(" << pattern << ") failed";
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace oishell::mcp::test
