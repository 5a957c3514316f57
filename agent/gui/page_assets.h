#pragma once
// The page's own files (agent/gui/page/), built into the binary (CMake turns them into agent/gui/page_assets.cc's
// generated table), so the agent serves them without any file to install or find.
#include <optional>
#include <string_view>

namespace oishell::agent::gui {

struct PageAsset {
  std::string_view content_type;
  std::string_view body;
};

// "/index.html", "/app.js", "/app.css"; nullopt for anything else.
std::optional<PageAsset> page_asset(std::string_view path);

}  // namespace oishell::agent::gui
