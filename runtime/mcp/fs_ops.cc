#include "runtime/mcp/fs_ops.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/base64.h"
#include "base/unique_fd.h"

namespace oishell::mcp::fs {
namespace {

using nlohmann::json;

json sys_error(const char* call, const std::string& path, int err) {
  const char* name = strerrorname_np(err);
  return {{"error",
           {{"call", call},
            {"path", path},
            {"errno", name ? name : "errno " + std::to_string(err)},
            {"message", std::strerror(err)}}}};
}

json other_error(const char* kind, const std::string& path, const std::string& message) {
  return {{"error", {{"kind", kind}, {"path", path}, {"message", message}}}};
}

// Opens for reading without blocking on a FIFO and without taking a terminal.
int open_read(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

// Reads up to `limit` bytes from `fd` at its position; -1 with errno on failure.
ssize_t read_up_to(int fd, std::string& out, uint64_t limit) {
  char buffer[65536];
  while (out.size() < limit) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buffer, limit - out.size()));
    ssize_t n = ::read(fd, buffer, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return static_cast<ssize_t>(out.size());
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

const char* type_name(mode_t mode) {
  if (S_ISREG(mode)) return "file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

struct Lister {
  std::vector<json> entries;
  bool truncated = false;

  void walk(int dir_fd, const std::string& prefix, int depth_left) {
    UniqueFd owned(dir_fd);
    DIR* dir = ::fdopendir(owned.get());
    if (!dir) return;
    (void)owned.release();  // closedir() closes it
    std::vector<std::string> names;
    while (dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      if (entries.size() >= kMaxListEntries) {
        truncated = true;
        break;
      }
      struct stat st {};
      const std::string rel = prefix.empty() ? name : prefix + "/" + name;
      if (::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        entries.push_back({{"path", rel}, {"type", "other"}, {"error", strerrorname_np(errno)}});
        continue;
      }
      json item = {{"path", rel}, {"type", type_name(st.st_mode)}};
      if (S_ISREG(st.st_mode)) item["size"] = static_cast<uint64_t>(st.st_size);
      if (S_ISDIR(st.st_mode) && depth_left > 1) {
        int child = ::openat(::dirfd(dir), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (child < 0) {
          item["error"] = strerrorname_np(errno);
          entries.push_back(std::move(item));
          continue;
        }
        entries.push_back(std::move(item));
        walk(child, rel, depth_left - 1);
        continue;
      }
      entries.push_back(std::move(item));
    }
    ::closedir(dir);
  }
};

}  // namespace

bool valid_utf8(const std::string& bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

json read_file(const std::string& path, uint64_t offset, uint64_t length) {
  UniqueFd fd(open_read(path));
  if (!fd) return sys_error("open", path, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return sys_error("fstat", path, errno);
  if (S_ISDIR(st.st_mode)) return sys_error("read", path, EISDIR);
  if (!S_ISREG(st.st_mode)) return other_error("not_regular", path, "not a regular file (a device, FIFO or socket)");
  length = std::min(length, kMaxReadBytes);
  if (offset > 0 && ::lseek(fd.get(), static_cast<off_t>(offset), SEEK_SET) < 0) return sys_error("lseek", path, errno);
  std::string content;
  if (read_up_to(fd.get(), content, length) < 0) return sys_error("read", path, errno);
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  json out = {{"path", path},
              {"size", size},
              {"offset", offset},
              {"length", content.size()},
              {"truncated", offset + content.size() < size}};
  if (valid_utf8(content)) {
    out["encoding"] = "utf-8";
    out["content"] = std::move(content);
  } else {
    out["encoding"] = "base64";
    out["content"] = base64_encode(content);
  }
  return out;
}

json write_file(const std::string& path, const std::string& content, bool append) {
  struct stat before {};
  const bool existed = ::stat(path.c_str(), &before) == 0;
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (append ? O_APPEND : O_TRUNC);
  UniqueFd fd(::open(path.c_str(), flags, 0666));
  if (!fd) return sys_error("open", path, errno);
  if (!write_all(fd.get(), content)) return sys_error("write", path, errno);
  if (::close(fd.release()) != 0) return sys_error("close", path, errno);
  return {{"path", path}, {"bytes", content.size()}, {"created", !existed}};
}

json edit_file(const std::string& path, const std::string& old_text, const std::string& new_text, bool replace_all) {
  if (old_text.empty()) return other_error("invalid", path, "the text to replace is empty");
  std::string content;
  {
    UniqueFd fd(open_read(path));
    if (!fd) return sys_error("open", path, errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return sys_error("fstat", path, errno);
    if (!S_ISREG(st.st_mode)) return other_error("not_regular", path, "not a regular file");
    if (static_cast<uint64_t>(st.st_size) > kMaxEditBytes)
      return other_error("too_large", path, "larger than 16 MiB: edit it with run_command or run_code");
    if (read_up_to(fd.get(), content, kMaxEditBytes + 1) < 0) return sys_error("read", path, errno);
  }
  std::vector<size_t> at;
  for (size_t pos = content.find(old_text); pos != std::string::npos; pos = content.find(old_text, pos + old_text.size()))
    at.push_back(pos);
  if (at.empty()) return other_error("not_found", path, "the text to replace does not occur in the file");
  if (at.size() > 1 && !replace_all) {
    return other_error("ambiguous", path,
                       "the text to replace occurs " + std::to_string(at.size()) +
                           " times; give more context to make it unique, or set replace_all");
  }
  std::string edited;
  edited.reserve(content.size() + at.size() * new_text.size());
  size_t from = 0;
  for (size_t pos : at) {
    edited.append(content, from, pos - from);
    edited += new_text;
    from = pos + old_text.size();
  }
  edited.append(content, from, std::string::npos);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY));
  if (!fd) return sys_error("open", path, errno);
  if (!write_all(fd.get(), edited)) return sys_error("write", path, errno);
  if (::close(fd.release()) != 0) return sys_error("close", path, errno);
  return {{"path", path}, {"replacements", at.size()}};
}

json list_files(const std::string& path, int depth) {
  depth = std::clamp(depth, 1, kMaxListDepth);
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return sys_error("open", path, errno);
  Lister lister;
  lister.walk(fd, "", depth);
  return {{"path", path}, {"entries", std::move(lister.entries)}, {"truncated", lister.truncated}};
}

}  // namespace oishell::mcp::fs
