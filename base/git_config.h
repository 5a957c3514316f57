#pragma once
// Git's config files as pure functions on their text, for the repository guard (repo_guard.h): a parser that
// accepts what git's own parser accepts (config.c: git_parse_source, get_base_var, get_value, parse_value) and
// refuses anything it cannot mirror exactly, a writer that produces the text git itself writes, and the sanitiser
// that keeps only an allowlist of keys that make git run nothing and point it nowhere else.
//
// The sanitiser never copies input lines: it re-serialises what it parsed, so what git reads from its output is
// exactly what the parser saw. A config git wrote (`git init`, `git remote add`, `git config user.name ...`) comes
// out byte-identical and is reported unchanged.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace oishell {

struct GitConfigEntry {
  std::string key;                   // as written ("logAllRefUpdates"); git matches it case-insensitively
  std::optional<std::string> value;  // unescaped; nullopt for a bare `key` line, which git reads as true
  bool operator==(const GitConfigEntry&) const = default;
};

struct GitConfigSection {
  std::string name;                       // as written ("core", "Branch"); git matches it case-insensitively
  std::optional<std::string> subsection;  // `[remote "origin"]`: "origin", case-sensitive; nullopt for `[core]`
  bool dotted = false;                    // written `[remote.origin]` (deprecated): git lowercases the subsection
  std::vector<GitConfigEntry> entries;
  bool operator==(const GitConfigSection&) const = default;
};

struct GitConfig {
  std::vector<GitConfigSection> sections;  // in file order; a section may appear more than once
  bool operator==(const GitConfig&) const = default;
};

// The name git reads an entry under, as `git config --list` prints it: section and key lowercased, the subsection
// as written ("remote.Origin.url"), or lowercased when dotted.
std::string git_config_name(const GitConfigSection& section, const GitConfigEntry& entry);

// Parses config text. Fails, naming the line, on anything git rejects (bad section header, invalid key name,
// unterminated quote, unknown escape, a bare key followed by a comment) and on what git would read in a way this
// parser does not mirror: NUL bytes, a carriage return not followed by a newline, an entry before any section
// header, and dotted headers with an empty part (`[a.]`, `[a..b]`) or a dot before a quoted subsection. A UTF-8
// byte order mark at the start is skipped, as git does.
Result<GitConfig> parse_git_config(std::string_view text);

// The text git writes for `config` (config.c: store_create_section, write_pair): `[core]`, `[remote "origin"]`
// with `"` and `\` escaped, `\tkey = value` with `\n`, `\t`, `"` and `\` escaped and the value quoted when it starts
// or ends with a space or holds `;` or `#`; a bare key as `\tkey`. Names keep their spelling.
std::string serialize_git_config(const GitConfig& config);

// Whether git may read this entry from a config written inside the sandbox (the allowlist in git_config.cc).
bool git_config_key_allowed(const GitConfigSection& section, const GitConfigEntry& entry);

struct SanitizedGitConfig {
  std::string text;                  // what git may read: the allowed entries, re-serialised; "" when unparseable
  std::vector<std::string> dropped;  // names of the dropped entries (git_config_name, lowercased, once each, in
                                     // file order); for unparseable text the one entry "everything (<why>)"
  bool changed = false;              // text differs from the input (by a byte)
  std::string error;                 // why the input is unparseable ("line 3: unterminated quoted value"), or ""
};

// Keeps the allowlisted entries of `text`. Sections left empty by the dropping are left out; sections that were
// empty stay. Idempotent: sanitising `text` of the result changes nothing.
[[nodiscard]] SanitizedGitConfig sanitize_git_config(std::string_view text);

}  // namespace oishell
