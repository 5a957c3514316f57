#pragma once
// SandboxSpec <-> JSON: stable key order and formatting, so `oishell compile --json` output can be diffed and
// compared with golden files. Enums are written as their names ("bind_ro", "read_exec", "proxy").
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell {

nlohmann::ordered_json spec_to_json(const SandboxSpec& spec);
// The inverse; an unknown enum name or a missing key is an error naming the key.
Result<SandboxSpec> spec_from_json(const nlohmann::json& json);

// Names used in the JSON (and by `explain`).
const char* to_string(MountStep::Kind kind);
const char* to_string(FsAccess access);
const char* to_string(HomeMode mode);
const char* to_string(GitMode mode);
const char* to_string(NetMode mode);
const char* to_string(OnUnlisted on_unlisted);
const char* to_string(SeccompLevel level);

}  // namespace oishell
