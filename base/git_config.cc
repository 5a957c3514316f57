#include "base/git_config.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace oishell {
namespace {

// Git's own ctype (git-compat-util.h, ctype.c): ASCII only, and only these four bytes are space (not \v or \f).
bool is_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alnum(int c) { return is_alpha(c) || (c >= '0' && c <= '9'); }
bool is_keychar(int c) { return is_alnum(c) || c == '-'; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

// git's get_next_char: "\r\n" reads as '\n', and the end of the text reads as '\n', again and again, with eof()
// set. Lone carriage returns and NUL bytes are refused before parsing starts.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  int next() {
    line_of_last_ = line_;
    if (pos_ >= text_.size()) {
      eof_ = true;
      return '\n';
    }
    char c = text_[pos_++];
    if (c == '\r') ++pos_;  // always followed by '\n' (checked)
    if (c == '\r' || c == '\n') {
      ++line_;
      return '\n';
    }
    return static_cast<unsigned char>(c);
  }
  bool eof() const { return eof_; }
  Status fail(std::string_view why) const {
    return Status::error("line " + std::to_string(line_of_last_) + ": " + std::string(why));
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1, line_of_last_ = 1;
  bool eof_ = false;
};

// get_base_var and get_extended_base_var, after the '['.
Result<GitConfigSection> parse_header(Reader& r) {
  GitConfigSection section;
  int c;
  for (;;) {
    c = r.next();
    if (r.eof()) return r.fail("unterminated section header");
    if (c == ']' || is_space(c)) break;
    if (!is_keychar(c) && c != '.') return r.fail("bad section header");
    section.name += static_cast<char>(c);
  }
  if (c == ']') {
    size_t dot = section.name.find('.');
    if (dot != std::string::npos) {
      // The deprecated [section.subsection]: git reads "section.subsection.key" and splits at the first dot.
      std::string sub = section.name.substr(dot + 1);
      section.name.resize(dot);
      if (section.name.empty() || sub.empty() || sub.front() == '.' || sub.back() == '.' ||
          sub.find("..") != std::string::npos) {
        return r.fail("bad section header (an empty part in a dotted name)");
      }
      section.subsection = std::move(sub);
      section.dotted = true;
    }
    if (section.name.empty()) return r.fail("bad section header (empty name)");
    return section;
  }
  // [section "subsection"]: whitespace, a quoted name in which '\' takes the next byte literally, then ']'.
  do {
    if (c == '\n') return r.fail("unterminated section header");
    c = r.next();
  } while (is_space(c));
  if (c != '"') return r.fail("bad section header (expected a quoted subsection)");
  std::string sub;
  for (;;) {
    c = r.next();
    if (c == '\n') return r.fail("unterminated subsection name");
    if (c == '"') break;
    if (c == '\\') {
      c = r.next();
      if (c == '\n') return r.fail("unterminated subsection name");
    }
    sub += static_cast<char>(c);
  }
  if (r.next() != ']') return r.fail("bad section header (expected ']' after the subsection)");
  if (section.name.empty() || section.name.find('.') != std::string::npos) {
    return r.fail("bad section header (empty or dotted name before a subsection)");
  }
  section.subsection = std::move(sub);
  return section;
}

// parse_value, after the '='.
Result<std::string> parse_value(Reader& r) {
  std::string value;
  bool quote = false, comment = false;
  size_t space = 0;
  for (;;) {
    int c = r.next();
    if (c == '\n') {
      if (quote) return r.fail("unterminated quoted value");
      return value;
    }
    if (comment) continue;
    if (is_space(c) && !quote) {
      if (!value.empty()) ++space;  // whitespace between words becomes one ' ' per byte; at either end, nothing
      continue;
    }
    if (!quote && (c == ';' || c == '#')) {
      comment = true;
      continue;
    }
    value.append(space, ' ');
    space = 0;
    if (c == '\\') {
      c = r.next();
      switch (c) {
        case '\n':
          continue;  // line continuation
        case 't':
          c = '\t';
          break;
        case 'b':
          c = '\b';
          break;
        case 'n':
          c = '\n';
          break;
        case '\\':
        case '"':
          break;
        default:
          return r.fail("unknown escape in a value");
      }
      value += static_cast<char>(c);
      continue;
    }
    if (c == '"') {
      quote = !quote;
      continue;
    }
    value += static_cast<char>(c);
  }
}

// get_value, after the key's first letter.
Result<GitConfigEntry> parse_entry(Reader& r, int first) {
  GitConfigEntry entry;
  entry.key = static_cast<char>(first);
  int c;
  for (;;) {
    c = r.next();
    if (r.eof() || !is_keychar(c)) break;
    entry.key += static_cast<char>(c);
  }
  while (c == ' ' || c == '\t') c = r.next();
  if (c == '\n') return entry;  // a bare key: true
  if (c != '=') return r.fail("invalid key name, or a key without '='");
  auto value = parse_value(r);
  if (!value) return value.status();
  entry.value = std::move(*value);
  return entry;
}

void append_value(std::string& out, const std::string& value) {
  // write_pair: quotes keep a leading or trailing space and what follows a comment character.
  bool quote = (!value.empty() && (value.front() == ' ' || value.back() == ' ')) ||
               value.find_first_of(";#") != std::string::npos;
  if (quote) out += '"';
  for (char c : value) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
      case '\\':
        out += '\\';
        out += c;
        break;
      default:
        out += c;
    }
  }
  if (quote) out += '"';
}

// The allowlist. What git reads from these changes how it records and shows things, never what it executes or
// where it reads config, hooks or a work tree from. Everything else is dropped, among it:
// - programs git runs: core.fsmonitor, core.hooksPath (hooks from anywhere), core.pager, core.editor,
//   core.sshCommand, core.askPass, core.gitProxy, sequence.editor, pager.*, diff.external, diff.*.command,
//   diff.*.textconv, filter.* (clean/smudge/process), merge.*.driver, alias.* ("!cmd"), credential.* (helpers),
//   gpg.*program, remote.*.uploadpack / receivepack / vcs (a remote helper), submodule.*.update ("!cmd"),
//   uploadpack.packObjectsHook;
// - other places git reads or writes: core.worktree (checkouts written to another directory), include.path and
//   includeIf.* (config from another file), core.attributesFile and core.excludesFile, extensions.worktreeConfig
//   (config.worktree read too), safe.directory;
// - where fetches and pushes go and what they may run: url.*.insteadOf / pushInsteadOf (a push sent elsewhere),
//   remote.*.proxy, http.*, protocol.*.allow (re-enables the ext:: transport, which runs a command).
constexpr std::string_view kPlainKeys[] = {"core.repositoryformatversion",
                                           "core.filemode",
                                           "core.bare",
                                           "core.logallrefupdates",
                                           "core.ignorecase",
                                           "core.precomposeunicode",
                                           "core.symlinks",
                                           "core.autocrlf",
                                           "core.eol",
                                           "core.safecrlf",
                                           "core.quotepath",
                                           "core.abbrev",
                                           "core.sparsecheckout",
                                           "core.sparsecheckoutcone",
                                           "init.defaultbranch",
                                           "user.name",
                                           "user.email",
                                           "extensions.objectformat",
                                           "extensions.refstorage",
                                           "pull.rebase",
                                           "push.default",
                                           "fetch.prune"};
// section.<name>.key, for any name.
constexpr std::pair<std::string_view, std::string_view> kNamedKeys[] = {
    {"remote", "url"},       {"remote", "pushurl"},    {"remote", "fetch"},       {"remote", "push"},
    {"remote", "tagopt"},    {"remote", "prune"},      {"branch", "remote"},      {"branch", "merge"},
    {"branch", "rebase"},    {"branch", "pushremote"}, {"branch", "description"}, {"submodule", "url"},
    {"submodule", "active"}, {"submodule", "branch"},
};

}  // namespace

std::string git_config_name(const GitConfigSection& section, const GitConfigEntry& entry) {
  std::string name = lowered(section.name);
  if (section.subsection) name += "." + (section.dotted ? lowered(*section.subsection) : *section.subsection);
  return name + "." + lowered(entry.key);
}

Result<GitConfig> parse_git_config(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // git skips a UTF-8 byte order mark
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
    if (text[i] == '\0') return Status::error("line " + std::to_string(line) + ": a NUL byte");
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) {
      return Status::error("line " + std::to_string(line) + ": a carriage return not followed by a newline");
    }
  }
  GitConfig config;
  Reader r(text);
  bool comment = false;
  for (;;) {
    int c = r.next();
    if (c == '\n') {
      if (r.eof()) return config;
      comment = false;
      continue;
    }
    if (comment || is_space(c)) continue;
    if (c == '#' || c == ';') {
      comment = true;
      continue;
    }
    if (c == '[') {
      auto section = parse_header(r);
      if (!section) return section.status();
      config.sections.push_back(std::move(*section));
      continue;  // git reads on after ']' on the same line: `[core] bare = false` is one section and one entry
    }
    if (!is_alpha(c)) return r.fail("expected a section header, a key or a comment");
    if (config.sections.empty()) return r.fail("an entry before any section header");
    auto entry = parse_entry(r, c);
    if (!entry) return entry.status();
    config.sections.back().entries.push_back(std::move(*entry));
  }
}

std::string serialize_git_config(const GitConfig& config) {
  std::string out;
  for (const auto& section : config.sections) {
    out += '[' + section.name;
    if (section.subsection && section.dotted) {
      out += '.' + *section.subsection;
    } else if (section.subsection) {
      out += " \"";
      for (char c : *section.subsection) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += '"';
    }
    out += "]\n";
    for (const auto& entry : section.entries) {
      out += '\t' + entry.key;
      if (entry.value) {
        out += " = ";
        append_value(out, *entry.value);
      }
      out += '\n';
    }
  }
  return out;
}

bool git_config_key_allowed(const GitConfigSection& section, const GitConfigEntry& entry) {
  std::string name = lowered(section.name), key = lowered(entry.key);
  if (!section.subsection) {
    std::string full = name + "." + key;
    return std::find(std::begin(kPlainKeys), std::end(kPlainKeys), full) != std::end(kPlainKeys);
  }
  std::pair<std::string_view, std::string_view> named(name, key);
  return std::find(std::begin(kNamedKeys), std::end(kNamedKeys), named) != std::end(kNamedKeys);
}

SanitizedGitConfig sanitize_git_config(std::string_view text) {
  SanitizedGitConfig out;
  auto unparseable = [&](std::string why) {
    out.text.clear();
    out.dropped = {"everything (" + why + ")"};
    out.changed = !text.empty();
    out.error = std::move(why);
    return out;
  };
  auto parsed = parse_git_config(text);
  if (!parsed) return unparseable(parsed.status().message());
  GitConfig kept;
  for (auto& section : parsed->sections) {
    bool had_entries = !section.entries.empty();
    GitConfigSection safe = section;
    safe.entries.clear();
    for (auto& entry : section.entries) {
      if (git_config_key_allowed(section, entry)) {
        safe.entries.push_back(std::move(entry));
        continue;
      }
      std::string name = git_config_name(section, entry);
      if (std::find(out.dropped.begin(), out.dropped.end(), name) == out.dropped.end()) out.dropped.push_back(name);
    }
    if (!had_entries || !safe.entries.empty()) kept.sections.push_back(std::move(safe));
  }
  out.text = serialize_git_config(kept);
  // What git reads back must be what was kept; the writer is git's, so this only fails closed on a writer bug.
  auto reread = parse_git_config(out.text);
  if (!reread || !(*reread == kept)) return unparseable("the sanitised text does not read back as written");
  out.changed = out.text != text;
  return out;
}

}  // namespace oishell
