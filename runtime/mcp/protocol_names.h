#pragma once
// MCP's names and codes that more than one part of `oishell mcp`'s server uses (runtime/mcp/server.h): the log
// levels of logging/setLevel and notifications/message, the session's event log as a resource, and the code for a
// resource that does not exist.
#include <array>
#include <string>

namespace oishell::mcp {

inline constexpr std::array<const char*, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                          "error", "critical", "alert",  "emergency"};
// A level's index in kLogLevels (a higher one is more severe), or -1 for a name that is not one.
inline int level_index(const std::string& level) {
  for (size_t i = 0; i < kLogLevels.size(); ++i) {
    if (level == kLogLevels[i]) return static_cast<int>(i);
  }
  return -1;
}

inline constexpr const char* kEventLogUri = "oishell://session/events";
// MCP's code for a resource that does not exist (2025-11-25).
inline constexpr int kResourceNotFound = -32002;

}  // namespace oishell::mcp
