#include "agent/llm/prompt_images.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/llm/image.h"
#include "base/percent_encoding.h"
#include "base/unique_fd.h"
#include "runtime/sys/syscalls.h"

namespace oishell::agent {
namespace {

bool has_image_extension(const std::string& path) {
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return false;
  std::string ext = path.substr(dot + 1);
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "png" || ext == "jpg" || ext == "jpeg" || ext == "gif" || ext == "webp";
}

// A word as typed, turned into a path: file:// URLs decoded, ~/ expanded. Empty when it is not an image path.
std::string to_path(const std::string& typed, const std::string& home, bool* explicit_path) {
  std::string_view word(typed);
  std::string decoded;
  if (word.starts_with("file://")) {
    decoded = percent_decoded(word.substr(7));
    word = decoded;
    if (word.starts_with("localhost/")) word.remove_prefix(9);
    *explicit_path = true;
  }
  std::string path;
  if (word.starts_with("~/") && !home.empty()) {
    path = home;
    path.append(word.substr(1));
    *explicit_path = true;
  } else {
    path.assign(word);
  }
  if (path.starts_with("/") || path.starts_with("./") || path.starts_with("../")) *explicit_path = true;
  return has_image_extension(path) ? path : std::string();
}

}  // namespace

std::vector<PromptImagePath> image_paths_in_prompt(const std::string& text, const std::string& home) {
  std::vector<PromptImagePath> out;
  auto add = [&](const std::string& word, bool quoted) {
    bool explicit_path = quoted;
    std::string path = to_path(word, home, &explicit_path);
    if (path.empty()) return;
    for (const auto& p : out) {
      if (p.path == path) return;
    }
    out.push_back({path, explicit_path});
  };
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '\'' || c == '"') {  // a quoted path: up to the matching quote
      size_t end = text.find(c, i + 1);
      if (end != std::string::npos) {
        add(text.substr(i + 1, end - i - 1), true);
        i = end + 1;
        continue;
      }
    }
    // A word: up to unescaped whitespace; "\ " and other backslash escapes stand for the character.
    std::string word;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        word += text[i + 1];
        i += 2;
        continue;
      }
      word += text[i++];
    }
    // Sentence punctuation after a path ("see /tmp/a.png.") is not part of it.
    while (!word.empty() && std::strchr(",.;:!?)]}>'\"", word.back()) != nullptr) {
      word.pop_back();
    }
    while (!word.empty() && std::strchr("(<[{'\"", word.front()) != nullptr) {
      word.erase(0, 1);
    }
    add(word, false);
  }
  return out;
}

Result<Message> read_prompt_image(const std::string& path) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(sys::openat2(AT_FDCWD, path.c_str(), &how));
  if (!fd && errno == ENOSYS) fd.reset(::open(path.c_str(), static_cast<int>(how.flags) | O_NOFOLLOW));
  if (!fd) {
    if (errno == ELOOP) {
      return Status::error(path + ": a symbolic link is on the path; the agent reads images only by their real "
                                  "path (the sandbox could have planted a link)");
    }
    return Status::from_errno(errno, "open(" + path + ")");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Status::from_errno(errno, "fstat(" + path + ")");
  if (!S_ISREG(st.st_mode)) return Status::error(path + ": not a regular file");
  if (static_cast<size_t>(st.st_size) > kMaxPromptImageBytes) {
    return Status::error(path + ": " + std::to_string(st.st_size / 1024) + " KB, more than the " +
                         std::to_string(kMaxPromptImageBytes >> 20) + " MiB the model APIs take");
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::from_errno(errno, "read(" + path + ")");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  auto info = sniff_image(bytes);
  if (!info) return Status::error(path + ": not a PNG, JPEG, GIF or WebP image (by its first bytes)");
  return image_message("user", *info, bytes);
}

std::vector<PromptImage> load_prompt_images(const std::string& text, const std::string& home) {
  std::vector<PromptImage> out;
  for (const auto& candidate : image_paths_in_prompt(text, home)) {
    PromptImage img;
    img.path = candidate.path;
    auto read = read_prompt_image(candidate.path);
    if (read) {
      img.message = std::move(*read);
    } else {
      // A file that is not there is a name in passing ("save it as /tmp/plot.png"), not an attachment.
      struct stat st {};
      if (::lstat(candidate.path.c_str(), &st) != 0 && errno == ENOENT) continue;
      img.problem = read.status().message();
    }
    out.push_back(std::move(img));
  }
  return out;
}

}  // namespace oishell::agent
