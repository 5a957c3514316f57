#pragma once
// Opening the web UI in the user's browser without putting its token on a command line (which every local user
// can read in /proc): the launcher ($BROWSER, else xdg-open) is given a private file (0600, in a 0700 directory)
// that forwards to the page. Only when there is a display (DISPLAY or WAYLAND_DISPLAY); the launcher runs detached
// (it may become the browser, which must outlive nothing of ours).
#include <string>

#include "agent/host/private_file.h"

namespace oishell::agent::gui {

// True when a launcher was started; `forwarder` keeps the private file (removed when it goes).
bool open_in_browser(const std::string& url, PrivateFile* forwarder);

}  // namespace oishell::agent::gui
