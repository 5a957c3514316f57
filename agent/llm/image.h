#pragma once
// Images in the conversation, kept as Open Interpreter keeps them: {"role": "user" | "computer", "type": "image",
// "format": "base64.png", "content": <base64>}. Helpers to recognise an image by its magic bytes (PNG, JPEG, GIF,
// WebP: what both model APIs accept), read its size, say what it is in words (for models that cannot see, and for
// images trimmed out of the context), and count it against the context window.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agent/core/message.h"

#include "base/base64.h"

namespace oishell::agent {

struct ImageInfo {
  std::string format;  // "png", "jpeg", "gif", "webp"
  int width = 0;       // 0: not found in the header
  int height = 0;
};

// The format by magic bytes, and the size from the header when it is there. nullopt: not one of the four.
std::optional<ImageInfo> sniff_image(std::string_view bytes);

// Encoding: base64_encode (base/base64.h). Decodes up to `max_bytes` of output (the header is enough to sniff); invalid characters end the decoding.
std::string base64_decode(std::string_view text, size_t max_bytes = SIZE_MAX);

// An image message whose content is base64 data of a known format ("base64.png", "base64.jpeg", ...).
bool is_image_data(const Message& m);
// "image/png" for "base64.png" ("jpg" is jpeg); empty when not an image data message.
std::string image_media_type(const Message& m);
// The image message for `bytes` (already sniffed).
Message image_message(const std::string& role, const ImageInfo& info, std::string_view bytes);

// "PNG image, 640×480, 12 KB" (what is known of it).
std::string describe_image(const Message& m);
// The text a model that cannot see is given instead of the image, with who showed it.
std::string image_as_text(const Message& m);

// About what the APIs count for an image: width×height/750 (Anthropic's rule; OpenAI's tiles land close), between
// 85 and 1600; 1000 when the size is unknown. A description's tokens for a message that is not image data.
size_t image_tokens(const Message& m);

}  // namespace oishell::agent
