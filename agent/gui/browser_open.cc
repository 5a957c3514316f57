#include "agent/gui/browser_open.h"

#include <unistd.h>

#include <cstdlib>

#include "agent/host/subprocess.h"

namespace oishell::agent::gui {
namespace {

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

bool open_in_browser(const std::string& url, PrivateFile* forwarder) {
  const char* display = std::getenv("DISPLAY");
  const char* wayland = std::getenv("WAYLAND_DISPLAY");
  if (!(display && *display) && !(wayland && *wayland)) return false;
  const char* browser = std::getenv("BROWSER");
  std::string launcher = browser && *browser ? browser : "xdg-open";
  if (launcher.find('/') == std::string::npos && !program_on_path(launcher)) return false;
  const std::string page = "<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=\"0;url=" +
                           html_escape(url) + "\"><title>interpreter</title><p>Opening <a href=\"" +
                           html_escape(url) + "\">the interpreter's page</a>...";
  auto file = PrivateFile::create("interpreter-gui", "open.html", page);
  if (!file) return false;
  *forwarder = std::move(*file);
  return spawn_detached({launcher, forwarder->path()}).is_ok();
}

}  // namespace oishell::agent::gui
