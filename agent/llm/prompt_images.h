#pragma once
// Images named in what the user typed: paths as typed or as a terminal pastes a dropped file ('quoted', "quoted",
// with backslash-escaped spaces, file:// URLs with %-escapes), ending in .png, .jpg, .jpeg, .gif or .webp. The agent
// reads such a file only because the user named it: no symbolic link is followed anywhere on the path (the sandbox
// can write the workspace and could have planted one), it must be a regular file of at most 5 MiB (what the model
// APIs take), and its magic bytes must say PNG, JPEG, GIF or WebP.
#include <optional>
#include <string>
#include <vector>

#include "agent/core/message.h"
#include "base/status.h"

namespace oishell::agent {

inline constexpr size_t kMaxPromptImageBytes = 5u << 20;

// The candidate paths, in order, unquoted and unescaped, `~/` expanded with `home`. `explicit_path` says whether
// the user clearly meant a path (quoted, absolute, ~/, ./, file://): a missing file is then worth a warning.
struct PromptImagePath {
  std::string path;
  bool explicit_path = false;
};
std::vector<PromptImagePath> image_paths_in_prompt(const std::string& text, const std::string& home);

// Reads and checks one image file: the user's image message ({"role": "user", "type": "image", "format":
// "base64.png", ...}). Errors name the path and the reason.
Result<Message> read_prompt_image(const std::string& path);

struct PromptImage {
  std::string path;
  std::optional<Message> message;  // read
  std::string problem;             // not attached, and why (empty: nothing worth saying)
};
// Every image the prompt names, read.
std::vector<PromptImage> load_prompt_images(const std::string& text, const std::string& home);

}  // namespace oishell::agent
