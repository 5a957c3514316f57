#include "agent/terminal/json_display.h"

namespace oishell::agent {

using nlohmann::json;

JsonDisplay::JsonDisplay(FILE* out)
    : LmcChunkDisplay(LmcDialect::json_lines(),
                      [out](const json& chunk) {
                        std::string line =
                            chunk.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
                        line.push_back('\n');
                        std::fwrite(line.data(), 1, line.size(), out);
                        std::fflush(out);
                      }),
      out_(out) {}

}  // namespace oishell::agent
