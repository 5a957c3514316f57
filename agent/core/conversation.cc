#include "agent/core/conversation.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "agent/host/atomic_file.h"
#include "agent/core/json_util.h"

namespace oishell::agent {

std::string conversation_file_stem(const std::string& first_user_message, std::time_t when) {
  std::string words;
  int count = 0;
  bool in_word = false;
  for (char c : first_user_message) {
    bool word_char = std::isalnum(static_cast<unsigned char>(c));
    if (word_char) {
      if (!in_word && !words.empty()) {
        if (++count >= 6) break;
        words.push_back('_');
      }
      words.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      if (words.size() > 60) break;
    }
    in_word = word_char;
  }
  if (words.empty()) words = "conversation";
  char stamp[32];
  std::tm tm{};
  ::localtime_r(&when, &tm);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tm);
  return words + "__" + stamp;
}

Status ConversationStore::save(const std::vector<Message>& messages) {
  if (path_.empty()) {
    std::string first;
    for (const auto& m : messages) {
      if (m.role == "user" && m.type == "message") {
        first = m.content;
        break;
      }
    }
    OI_TRY_CTX(make_dirs(dir_), "creating the conversations directory");
    std::string stem = conversation_file_stem(first, std::time(nullptr));
    std::string candidate = dir_ + "/" + stem + ".json";
    struct stat st {};
    for (int n = 2; ::stat(candidate.c_str(), &st) == 0; ++n) {
      candidate = dir_ + "/" + stem + "-" + std::to_string(n) + ".json";
    }
    path_ = candidate;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : messages) list.push_back(to_json(m));
  OI_TRY_CTX(write_file_atomic(path_, dump_json(list, 2) + "\n"), "saving the conversation");
  return Status::ok();
}

std::string readable_conversation_name(const std::string& stem) {
  std::string out;
  size_t sep = stem.find("__");
  std::string words = stem.substr(0, sep), when = sep == std::string::npos ? "" : stem.substr(sep + 2);
  for (char& ch : words) ch = ch == '_' ? ' ' : ch;
  for (char& ch : when) ch = ch == '_' ? ' ' : ch;
  return when.empty() ? words : words + "... (" + when + ")";
}

std::vector<ConversationInfo> list_conversations(const std::string& dir) {
  std::vector<ConversationInfo> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    std::string path = dir + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    out.push_back({path, name.substr(0, name.size() - 5), st.st_mtime});
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.modified != b.modified ? a.modified > b.modified : a.name > b.name;
  });
  return out;
}

Result<std::vector<Message>> load_conversation(const std::string& path, size_t* skipped) {
  auto text = read_file(path);
  if (!text) return text.status().with_context("loading conversation");
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return Status::error(path + ": not a conversation (expected a JSON list of messages)");
  std::vector<Message> out;
  for (size_t i = 0; i < j.size(); ++i) {
    Message m;
    std::string error;
    if (!from_json(j[i], &m, &error)) {
      if (skipped) {
        ++*skipped;
        continue;
      }
      return Status::error(path + ": message " + std::to_string(i + 1) + ": " + error);
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace oishell::agent
