#include <unistd.h>

#include "agent/core/display.h"
#include "agent/terminal/json_display.h"
#include "agent/terminal/terminal_display.h"

namespace oishell::agent {

std::unique_ptr<Display> make_display(const DisplayOptions& options) {
  if (options.json) return std::make_unique<JsonDisplay>(stdout);
  bool tty_out = ::isatty(STDOUT_FILENO) == 1;
  bool colour = !options.plain && options.colour && tty_out;
  bool interactive = ::isatty(STDIN_FILENO) == 1 && tty_out;
  return std::make_unique<TerminalDisplay>(stdout, colour, colour && interactive, interactive, options.verbose);
}

}  // namespace oishell::agent
