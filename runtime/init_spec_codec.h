#pragma once
// The part of the compiled policy that sandbox init applies, as the `spec` message carries it (base/wire.h bytes):
// the mount plan, the hostname, the Landlock rules, and the network mode with the relay's ports. Nothing else
// crosses: the environment, the network allow/deny lists and the protected-path list stay with the supervisor.
#include <string>
#include <string_view>

#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell {

std::string encode_init_spec(const SandboxSpec& spec);

// A SandboxSpec holding only the fields above (the others at their defaults). Truncated or trailing bytes, or an
// enum value out of range, are refused with the byte offset.
Result<SandboxSpec> decode_init_spec(std::string_view bytes);

}  // namespace oishell
