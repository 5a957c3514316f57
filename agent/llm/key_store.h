#pragma once
// API keys the user chose to save when the no-model flow asked for one (agent/llm/key_prompt.h): one file per
// variable, DIR/<VARIABLE> (mode 0600) in a 0700 directory of the agent's config dir
// ($XDG_CONFIG_HOME/open-interpreter/keys). A saved key is used when neither --api_key nor the variable gives one.
// A file that is not a regular file owned by the user, or that others may read, is not used (like ssh's keys).
// The agent lists every saved key among the sandbox's secret values: none reaches the sandbox's environment.
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace oishell::agent {

class KeyStore {
 public:
  explicit KeyStore(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  std::string path(const std::string& variable) const { return dir_ + "/" + variable; }
  // The key saved for `variable`; nullopt when none (or when the file is unsafe: see `problem`).
  std::optional<std::string> get(const std::string& variable, std::string* problem = nullptr) const;
  // Writes the key (atomically, 0600; the directory is made 0700).
  [[nodiscard]] Status save(const std::string& variable, const std::string& key) const;
  // Every key saved (for the sandbox's secret values).
  std::vector<std::string> all() const;

 private:
  std::string dir_;
};

}  // namespace oishell::agent
