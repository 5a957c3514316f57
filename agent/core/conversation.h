#pragma once
// Conversations saved as they happen: the whole message list (Open Interpreter's JSON format: a list of
// {role, type, format, content}) rewritten atomically after every message, so a crash loses nothing.
#include <ctime>
#include <string>
#include <vector>

#include "agent/core/message.h"
#include "base/status.h"

namespace oishell::agent {

class ConversationStore {
 public:
  explicit ConversationStore(std::string dir) : dir_(std::move(dir)) {}
  // Continue an existing file (a resumed conversation).
  void attach(std::string path) { path_ = std::move(path); }
  // Writes `messages`; the first save picks the file name from the first user message and the time.
  Status save(const std::vector<Message>& messages);
  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string path_;
};

struct ConversationInfo {
  std::string path;
  std::string name;    // file name without .json
  std::time_t modified = 0;
};

// Newest first. A missing directory is an empty list.
std::vector<ConversationInfo> list_conversations(const std::string& dir);
// `skipped` null: a message that is not one is an error. Otherwise such messages (Open Interpreter's files may hold
// kinds this agent does not keep) are left out and counted.
Result<std::vector<Message>> load_conversation(const std::string& path, size_t* skipped = nullptr);
// "count_the_lines__2026-11-30_13-55-02" -> "count the lines... (2026-11-30 13-55-02)", as OI lists its files.
std::string readable_conversation_name(const std::string& stem);

// "count the lines in py files" + time -> "count_the_lines_in_py__2026-11-30_13-55-02"
std::string conversation_file_stem(const std::string& first_user_message, std::time_t when);

}  // namespace oishell::agent
