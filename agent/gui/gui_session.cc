#include "agent/gui/gui_session.h"

#include "agent/gui/browser_open.h"
#include "agent/host/interrupt.h"

namespace oishell::agent::gui {

GuiSession::GuiSession(const GuiOptions& options, Display& terminal, TerminalInput& input,
                       std::unique_ptr<PageInbox> inbox)
    : inbox_(std::move(inbox)), page_display_(hub_, options.workspace), tee_(terminal, page_display_),
      input_(input, terminal, *inbox_, hub_) {}

Result<std::unique_ptr<GuiSession>> GuiSession::start(const GuiOptions& options, Display& terminal,
                                                      TerminalInput& input) {
  auto inbox = PageInbox::create();
  if (!inbox) return inbox.status();
  std::unique_ptr<GuiSession> s(new GuiSession(options, terminal, input, std::move(*inbox)));
  GuiServerParts parts;
  parts.hub = &s->hub_;
  parts.inbox = s->inbox_.get();
  parts.conversations_dir = options.conversations_dir;
  parts.stop_work = [] { interrupt::request(); };  // the block or the model's stream stops, as on Ctrl-C
  auto server = GuiServer::start(std::move(parts), "127.0.0.1", options.port);
  if (!server) return server.status().with_context("--gui");
  s->server_ = std::move(*server);
  s->url_ = s->server_->url();
  if (options.open_browser) s->opened_ = open_in_browser(s->url_, &s->forwarder_);
  return s;
}

GuiSession::~GuiSession() {
  if (server_) server_->stop();
}

}  // namespace oishell::agent::gui
