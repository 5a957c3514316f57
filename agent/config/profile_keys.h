#pragma once
// The keys an Open Interpreter 0.4.3 profile may set, as this agent reads them: the attributes of OI's
// `interpreter`, `interpreter.llm` and `interpreter.computer` objects (and the keys its docs list), plus ours
// (`sandbox`, `policy`, `max_turns`, `llm.provider`). Each is either applied here or accepted with a one-line note
// saying why it has no effect. Names are dotted (`llm.model`), whichever style the profile used. Pure data.
#include <span>
#include <string>
#include <string_view>

namespace oishell::agent {

// The profile format version Open Interpreter 0.4.3 writes and expects (OI_VERSION in its profiles.py).
inline constexpr std::string_view kProfileFormatVersion = "0.2.5";

enum class KeyUse {
  applied,    // this agent has the feature: the value is read and checked
  no_effect,  // accepted as OI accepts it; `note` says why nothing happens
};

struct ProfileKey {
  std::string_view name;  // dotted: "llm.model", "computer.languages", "auto_run"
  KeyUse use;
  std::string_view note;  // no_effect: the reason, shown after "`name`: "
};

std::span<const ProfileKey> profile_keys();
const ProfileKey* find_profile_key(std::string_view dotted);

// The objects a nested mapping may stand for (`llm:`, `computer:`, `computer.skills:`, `wtf:`).
bool is_profile_object(std::string_view dotted);

// Profiles older than kProfileFormatVersion named some settings differently (OI's migrate_profile mapping):
// "model" -> "llm.model", "local" -> "offline", ... Returns "" for a name that was not renamed.
std::string_view renamed_profile_key(std::string_view old_name);

// The known key closest to `unknown` ("modle" -> "llm.model", "languages" -> "computer.languages"), or "" when
// none is close enough to be a likely typo.
std::string suggest_profile_key(std::string_view unknown);

// Compares dotted version strings ("0.2.1" < "0.2.5" < "0.10"). Returns <0, 0, >0; nullopt-like failure is
// reported as `ok=false` for a version that is not dotted numbers.
int compare_versions(std::string_view a, std::string_view b, bool* ok);

}  // namespace oishell::agent
