// oishell-fs: the file operations of `oishell mcp`'s file tools, run inside the sandbox (runtime/mcp/fs_ops.h), so
// that the sandbox decides what a file tool may read or write, as it does for the sandbox's other processes.
//   oishell-fs read PATH OFFSET LENGTH
//   oishell-fs write PATH truncate|append      (the content on stdin)
//   oishell-fs edit PATH                       (stdin: {"old": ..., "new": ..., "replace_all": bool})
//   oishell-fs list PATH DEPTH
// One JSON object on stdout; exit status 0, 1 when the operation failed (the object has `error`), 2 for usage.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/mcp/fs_ops.h"

namespace {

using nlohmann::json;
namespace fs = oishell::mcp::fs;

bool read_stdin(std::string* out, size_t limit) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buffer, static_cast<size_t>(n));
    if (out->size() > limit) return false;
  }
}

bool number(const char* text, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno || !end || *end || text[0] == '-' || !text[0]) return false;
  *out = value;
  return true;
}

int usage() {
  std::fputs("usage: oishell-fs read PATH OFFSET LENGTH | write PATH truncate|append | edit PATH | list PATH DEPTH\n",
             stderr);
  return 2;
}

int emit(const json& result) {
  const std::string line = result.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(STDOUT_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 1;
    done += static_cast<size_t>(n);
  }
  return result.contains("error") ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string op = argv[1];
  const std::string path = argv[2];
  if (op == "read" && argc == 5) {
    uint64_t offset = 0, length = 0;
    if (!number(argv[3], &offset) || !number(argv[4], &length)) return usage();
    return emit(fs::read_file(path, offset, length));
  }
  if (op == "write" && argc == 4) {
    const std::string mode = argv[3];
    if (mode != "truncate" && mode != "append") return usage();
    std::string content;
    if (!read_stdin(&content, 256u << 20)) return emit({{"error", {{"kind", "input"}, {"message", "reading the content failed"}}}});
    return emit(fs::write_file(path, content, mode == "append"));
  }
  if (op == "edit" && argc == 3) {
    std::string input;
    if (!read_stdin(&input, 64u << 20)) return emit({{"error", {{"kind", "input"}, {"message", "reading the edit failed"}}}});
    const json edit = json::parse(input, nullptr, false);
    if (!edit.is_object() || !edit.contains("old") || !edit["old"].is_string() || !edit.contains("new") ||
        !edit["new"].is_string())
      return usage();
    const bool all = edit.contains("replace_all") && edit["replace_all"].is_boolean() && edit["replace_all"].get<bool>();
    return emit(fs::edit_file(path, edit["old"].get<std::string>(), edit["new"].get<std::string>(), all));
  }
  if (op == "list" && argc == 4) {
    uint64_t depth = 0;
    if (!number(argv[3], &depth)) return usage();
    return emit(fs::list_files(path, static_cast<int>(std::min<uint64_t>(depth, 64))));
  }
  return usage();
}
