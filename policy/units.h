#pragma once
// Sizes ("2GiB", "512MiB", "100MB", "4096") and durations ("30s", "10m", "1h30m", "250ms") in policies.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oishell::policy {

// Bytes. Units: B, KiB, MiB, GiB, TiB (1024) and KB, MB, GB, TB (1000); a bare number is bytes. Overflow = nullopt.
std::optional<uint64_t> parse_size(std::string_view text);
// Milliseconds. Units: ms, s, m, h, d, concatenated largest first ("1h30m"); a bare number is not accepted.
std::optional<uint64_t> parse_duration_ms(std::string_view text);

// "2 GiB", "512 MiB", "1000 bytes": the largest binary unit that divides exactly.
std::string format_size(uint64_t bytes);
// "30s", "10m", "1h30m", "250ms".
std::string format_duration_ms(uint64_t ms);

}  // namespace oishell::policy
