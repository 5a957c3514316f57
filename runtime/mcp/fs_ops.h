#pragma once
// The file operations of `oishell mcp`'s file tools (read_file, write_file, edit_file, list_files), as the process
// that calls them may do them. They run inside the sandbox, in `oishell-fs` (tools/oishell_fs/), a process sandbox
// init starts like any other: the sandbox's mount tree, Landlock rules, credentials and seccomp filter decide, never
// the supervisor's privileges. Each returns one JSON object, the result or {"error": {call, path, errno, message}}
// (`errno` the name, "EACCES"; absent for errors that are not a system call's, with `kind` instead).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace oishell::mcp::fs {

inline constexpr uint64_t kMaxReadBytes = 8u << 20;   // one read_file answer at most
inline constexpr uint64_t kMaxEditBytes = 16u << 20;  // edit_file reads the whole file
inline constexpr int kMaxListDepth = 8;
inline constexpr size_t kMaxListEntries = 5000;

// `length` bytes (at most kMaxReadBytes) from `offset` of a regular file. {path, size, offset, length, encoding
// ("utf-8" or "base64", when the bytes are not UTF-8), content, truncated (more follows)}.
nlohmann::json read_file(const std::string& path, uint64_t offset, uint64_t length);

// Creates or truncates `path` and writes `content` (append: at its end). {path, bytes, created}.
nlohmann::json write_file(const std::string& path, const std::string& content, bool append);

// Replaces `old_text` by `new_text` in `path`: exactly one occurrence unless `replace_all`. {path, replacements}.
nlohmann::json edit_file(const std::string& path, const std::string& old_text, const std::string& new_text,
                         bool replace_all);

// The entries under `path` down to `depth` levels (1: its own entries), sorted, at most kMaxListEntries.
// {path, entries: [{path (relative), type (file, directory, symlink, other), size}], truncated}; a directory
// that cannot be opened below the top is an entry with `error`.
nlohmann::json list_files(const std::string& path, int depth);

// True when `bytes` is valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool valid_utf8(const std::string& bytes);

}  // namespace oishell::mcp::fs
