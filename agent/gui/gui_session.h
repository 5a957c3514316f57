#pragma once
// `interpreter --gui`: the web UI's parts for one terminal session, put together: the events (EventHub), the page's
// view of what the terminal shows (GuiDisplay beside it, TeeDisplay), the input from both (GuiInput) and the server.
// The agent is given display() and input() instead of the terminal's own.
#include <memory>
#include <string>

#include "agent/gui/event_hub.h"
#include "agent/gui/gui_display.h"
#include "agent/gui/gui_input.h"
#include "agent/gui/gui_server.h"
#include "agent/gui/page_inbox.h"
#include "agent/gui/tee_display.h"
#include "agent/host/private_file.h"
#include "base/status.h"

namespace oishell::agent::gui {

struct GuiOptions {
  int port = 0;                   // 0: a free one
  std::string workspace;          // whose changes each block shows
  std::string conversations_dir;  // listed for resuming
  bool open_browser = true;       // when there is a display
};

class GuiSession {
 public:
  [[nodiscard]] static Result<std::unique_ptr<GuiSession>> start(const GuiOptions& options, Display& terminal,
                                                                 TerminalInput& input);
  ~GuiSession();

  Display& display() { return tee_; }
  GuiInput& input() { return input_; }
  const std::string& url() const { return url_; }
  // Whether the page was handed to a browser (else the user opens url()).
  bool opened() const { return opened_; }

 private:
  GuiSession(const GuiOptions& options, Display& terminal, TerminalInput& input, std::unique_ptr<PageInbox> inbox);

  EventHub hub_;
  std::unique_ptr<PageInbox> inbox_;
  GuiDisplay page_display_;
  TeeDisplay tee_;
  GuiInput input_;
  std::unique_ptr<GuiServer> server_;
  std::string url_;
  PrivateFile forwarder_;
  bool opened_ = false;
};

}  // namespace oishell::agent::gui
