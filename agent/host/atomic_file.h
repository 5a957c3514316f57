#pragma once
// Writing a file so that a crash at any moment leaves either the old or the new content: a temporary file in the
// same directory, fsync, rename over the target, fsync of the directory.
#include <string>
#include <string_view>

#include "base/status.h"

namespace oishell::agent {

Status write_file_atomic(const std::string& path, std::string_view data, int mode = 0600);
Result<std::string> read_file(const std::string& path, size_t max_bytes = 64 << 20);
// mkdir -p with mode for the directories it creates.
Status make_dirs(const std::string& path, int mode = 0700);

}  // namespace oishell::agent
