#include "agent/user/editor.h"

#include <unistd.h>

#include <cstdlib>
#include <utility>

#include "agent/host/atomic_file.h"
#include "agent/host/subprocess.h"

namespace oishell::agent {

namespace {

const char* extension_of(const std::string& language) {
  static const std::pair<const char*, const char*> kExtensions[] = {
      {"python", ".py"}, {"shell", ".sh"}, {"javascript", ".js"}, {"ruby", ".rb"},
      {"r", ".R"},       {"java", ".java"}, {"html", ".html"}};
  for (const auto& [name, ext] : kExtensions) {
    if (language == name) return ext;
  }
  return ".txt";
}

}  // namespace

std::optional<std::string> edit_in_editor(const std::string& code, const std::string& language, Display& display) {
  const char* ext = extension_of(language);
  const char* tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/interpreter-edit-XXXXXX" + ext;
  int fd = ::mkstemps(path.data(), static_cast<int>(std::string(ext).size()));
  if (fd < 0) {
    display.notice(NoticeLevel::error, "cannot create a file to edit: " + errno_text(errno));
    return std::nullopt;
  }
  ::close(fd);
  if (Status s = write_file_atomic(path, code); !s.is_ok()) {
    display.notice(NoticeLevel::error, s.message());
    ::unlink(path.c_str());
    return std::nullopt;
  }
  std::string editor;
  for (const char* var : {"VISUAL", "EDITOR"}) {
    if (const char* v = std::getenv(var); v && *v) {
      editor = v;
      break;
    }
  }
  if (editor.empty()) editor = ::access("/usr/bin/nano", X_OK) == 0 ? "nano" : "vi";
  // $EDITOR may carry arguments ("code --wait"): split on spaces.
  std::vector<std::string> argv;
  size_t pos = 0;
  while (pos < editor.size()) {
    size_t sp = editor.find(' ', pos);
    if (sp == std::string::npos) sp = editor.size();
    if (sp > pos) argv.push_back(editor.substr(pos, sp - pos));
    pos = sp + 1;
  }
  argv.push_back(path);
  display.flush();
  auto status = run_interactive(argv);
  std::optional<std::string> result;
  if (!status) {
    display.notice(NoticeLevel::error, "cannot start the editor: " + status.status().message());
  } else if (*status != 0) {
    display.notice(NoticeLevel::warning, "the editor exited with status " + std::to_string(*status));
  } else if (auto text = read_file(path)) {
    result = *text;
    while (!result->empty() && result->back() == '\n') result->pop_back();
  }
  ::unlink(path.c_str());
  return result;
}

}  // namespace oishell::agent
