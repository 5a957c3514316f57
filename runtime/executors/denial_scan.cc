#include "runtime/executors/denial_scan.h"

#include <algorithm>
#include <cerrno>

namespace oishell::executors {
namespace {

constexpr size_t kMaxLine = 4096;

struct ErrorWords {
  std::string_view words;
  int error;
};
// The strerror() texts (glibc's), Node's code names and Ruby's class names of the four errors.
constexpr ErrorWords kErrorWords[] = {
    {"Permission denied", EACCES},     {"permission denied", EACCES},  {"EACCES", EACCES},
    {"Operation not permitted", EPERM}, {"operation not permitted", EPERM}, {"EPERM", EPERM},
    {"Read-only file system", EROFS},  {"read-only file system", EROFS}, {"EROFS", EROFS},
    {"No such file or directory", ENOENT}, {"no such file or directory", ENOENT}, {"ENOENT", ENOENT},
};

// Words of a message that say the program was writing: creating, changing or removing.
constexpr std::string_view kWritingWords[] = {
    "cannot create", "cannot touch", "cannot remove", "cannot make", "cannot move", "cannot overwrite",
    "for writing", "mkdir", "rmdir", "unlink", "rename", "chmod", "chown", "Errno 30",
};

bool looks_like_path(std::string_view s) {
  if (s.empty() || s.size() > 4096) return false;
  if (s.find('\n') != std::string_view::npos || s.find('\0') != std::string_view::npos) return false;
  return s.front() == '/' || s.starts_with("./") || s.starts_with("../") || s.starts_with("~/");
}

// Quoted strings on the line: '...', "...", ‘...’ (U+2018/U+2019) and “...” (U+201C/U+201D).
std::vector<std::string> quoted_strings(std::string_view line) {
  std::vector<std::string> out;
  struct Quote {
    std::string_view open, close;
  };
  static constexpr Quote kQuotes[] = {{"'", "'"}, {"\"", "\""}, {"\u2018", "\u2019"}, {"\u201c", "\u201d"}};
  for (const Quote& q : kQuotes) {
    size_t at = 0;
    while ((at = line.find(q.open, at)) != std::string_view::npos) {
      const size_t begin = at + q.open.size();
      const size_t end = line.find(q.close, begin);
      if (end == std::string_view::npos) break;
      if (end > begin) out.emplace_back(line.substr(begin, end - begin));
      at = end + q.close.size();
    }
  }
  return out;
}

// The path of a "prog: [context: ]PATH: <error words>" line: the last ": "-separated part before the words, and of
// that its last space-separated word when it has several ("cannot create /etc/x").
std::string shell_style_path(std::string_view line, size_t words_at) {
  if (words_at < 2 || line.substr(words_at - 2, 2) != ": ") return "";
  std::string_view before = line.substr(0, words_at - 2);
  const size_t part = before.rfind(": ");
  if (part != std::string_view::npos) before.remove_prefix(part + 2);
  const size_t space = before.rfind(' ');
  if (space != std::string_view::npos && !looks_like_path(before)) before.remove_prefix(space + 1);
  return std::string(before);
}

// A word starting with / ./ ../ or ~/ (Ruby's "- /etc/shadow (Errno::EACCES)"), up to a space, ':' or ','.
std::vector<std::string> bare_paths(std::string_view line) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < line.size()) {
    const bool word_start = at == 0 || line[at - 1] == ' ' || line[at - 1] == '\t' || line[at - 1] == '(';
    if (word_start && looks_like_path(line.substr(at, 3))) {
      size_t end = at;
      while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != ',' && line[end] != ')') ++end;
      std::string_view word = line.substr(at, end - at);
      while (!word.empty() && (word.back() == ':' || word.back() == '.' || word.back() == ';')) word.remove_suffix(1);
      if (looks_like_path(word)) out.emplace_back(word);
      at = end;
    } else {
      ++at;
    }
  }
  return out;
}

void scan_line(std::string_view line, std::vector<PathFailure>* out) {
  size_t words_at = std::string_view::npos;
  int error = 0;
  for (const ErrorWords& w : kErrorWords) {
    const size_t at = line.find(w.words);
    if (at != std::string_view::npos && at < words_at) {
      words_at = at;
      error = w.error;
    }
  }
  if (error == 0) return;
  const bool writing =
      error == EROFS || std::any_of(std::begin(kWritingWords), std::end(kWritingWords),
                                    [&](std::string_view w) { return line.find(w) != std::string_view::npos; });
  std::vector<std::string> candidates;
  for (std::string& q : quoted_strings(line)) {
    if (!q.empty() && q.size() <= 4096 && q.find_first_of("\n\r") == std::string::npos) candidates.push_back(q);
  }
  if (candidates.empty()) candidates = bare_paths(line);
  if (candidates.empty()) {
    if (std::string p = shell_style_path(line, words_at); !p.empty()) candidates.push_back(p);
  }
  for (std::string& path : candidates) {
    if (out->size() >= kMaxFailures) return;
    const bool duplicate = std::any_of(out->begin(), out->end(), [&](const PathFailure& f) {
      return f.path == path && f.error == error;
    });
    if (!duplicate) out->push_back({std::move(path), error, writing});
  }
}

}  // namespace

std::vector<PathFailure> scan_path_failures(std::string_view output) {
  std::vector<PathFailure> out;
  size_t start = 0;
  while (start < output.size() && out.size() < kMaxFailures) {
    size_t end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() <= kMaxLine) scan_line(line, &out);
    start = end + 1;
  }
  return out;
}

}  // namespace oishell::executors
