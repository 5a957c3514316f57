#include "agent/llm/image.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace oishell::agent {
namespace {

uint32_t be32(std::string_view b, size_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(b[at])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(b[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(b[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 3]));
}
unsigned be16(std::string_view b, size_t at) {
  return (static_cast<unsigned>(static_cast<unsigned char>(b[at])) << 8) | static_cast<unsigned char>(b[at + 1]);
}
unsigned le16(std::string_view b, size_t at) {
  return static_cast<unsigned char>(b[at]) | (static_cast<unsigned>(static_cast<unsigned char>(b[at + 1])) << 8);
}
unsigned le24(std::string_view b, size_t at) {
  return le16(b, at) | (static_cast<unsigned>(static_cast<unsigned char>(b[at + 2])) << 16);
}

// The frame size of a JPEG: the first SOFn segment's height and width.
void jpeg_size(std::string_view b, ImageInfo* info) {
  size_t i = 2;
  while (i + 9 < b.size()) {
    if (static_cast<unsigned char>(b[i]) != 0xFF) return;
    unsigned char marker = static_cast<unsigned char>(b[i + 1]);
    if (marker == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    unsigned len = be16(b, i + 2);
    bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (sof) {
      info->height = static_cast<int>(be16(b, i + 5));
      info->width = static_cast<int>(be16(b, i + 7));
      return;
    }
    if (len < 2) return;
    i += 2 + len;
  }
}

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return s;
}

}  // namespace

std::optional<ImageInfo> sniff_image(std::string_view b) {
  ImageInfo info;
  if (b.size() >= 24 && b.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8)) {
    info.format = "png";
    if (b.substr(12, 4) == "IHDR") {
      info.width = static_cast<int>(be32(b, 16));
      info.height = static_cast<int>(be32(b, 20));
    }
    return info;
  }
  if (b.size() >= 3 && b.substr(0, 3) == std::string_view("\xFF\xD8\xFF", 3)) {
    info.format = "jpeg";
    jpeg_size(b, &info);
    return info;
  }
  if (b.size() >= 10 && (b.substr(0, 6) == "GIF87a" || b.substr(0, 6) == "GIF89a")) {
    info.format = "gif";
    info.width = static_cast<int>(le16(b, 6));
    info.height = static_cast<int>(le16(b, 8));
    return info;
  }
  if (b.size() >= 16 && b.substr(0, 4) == "RIFF" && b.substr(8, 4) == "WEBP") {
    info.format = "webp";
    std::string_view chunk = b.substr(12, 4);
    if (chunk == "VP8X" && b.size() >= 30) {
      info.width = static_cast<int>(le24(b, 24) + 1);
      info.height = static_cast<int>(le24(b, 27) + 1);
    } else if (chunk == "VP8 " && b.size() >= 30) {
      info.width = static_cast<int>(le16(b, 26) & 0x3FFF);
      info.height = static_cast<int>(le16(b, 28) & 0x3FFF);
    } else if (chunk == "VP8L" && b.size() >= 25) {
      uint32_t bits = le16(b, 21) | (static_cast<uint32_t>(le16(b, 23)) << 16);
      info.width = static_cast<int>((bits & 0x3FFF) + 1);
      info.height = static_cast<int>(((bits >> 14) & 0x3FFF) + 1);
    }
    return info;
  }
  return std::nullopt;
}

std::string base64_decode(std::string_view text, size_t max_bytes) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '\n' || c == '\r') continue;
    int v = b64_value(c);
    if (v < 0) break;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
      if (out.size() >= max_bytes) break;
    }
  }
  return out;
}

bool is_image_data(const Message& m) { return !image_media_type(m).empty(); }

std::string image_media_type(const Message& m) {
  if (m.type != "image" || m.format.rfind("base64.", 0) != 0 || m.content.empty()) return "";
  std::string f = m.format.substr(7);
  if (f == "jpg" || f == "jpeg") return "image/jpeg";
  if (f == "png" || f == "gif" || f == "webp") return "image/" + f;
  return "";
}

Message image_message(const std::string& role, const ImageInfo& info, std::string_view bytes) {
  return {role, "image", "base64." + info.format, base64_encode(bytes), ""};
}

std::string describe_image(const Message& m) {
  if (!is_image_data(m)) return m.content.empty() ? "an image" : m.content;
  std::string head = base64_decode(m.content, 64 * 1024);
  size_t bytes = m.content.size() / 4 * 3;
  auto info = sniff_image(head);
  std::string text = upper(info ? info->format : m.format.substr(7)) + " image";
  if (info && info->width > 0 && info->height > 0) {
    text += ", " + std::to_string(info->width) + "x" + std::to_string(info->height);
  }
  char size[32];
  if (bytes >= 1024 * 1024) std::snprintf(size, sizeof size, "%.1f MB", static_cast<double>(bytes) / (1024 * 1024));
  else std::snprintf(size, sizeof size, "%zu KB", (bytes + 1023) / 1024);
  return text + ", " + size;
}

std::string image_as_text(const Message& m) {
  // A description kept where the image itself was trimmed away (format "description") says so itself.
  if (!is_image_data(m)) return "(" + describe_image(m) + ")";
  if (m.role == "user") {
    return "(The user attached an image: " + describe_image(m) + ". It is not shown to this model.)";
  }
  return "(The code displayed an image, shown to the user: " + describe_image(m) + ". It is not shown to this model.)";
}

size_t image_tokens(const Message& m) {
  if (!is_image_data(m)) return (m.content.size() + 3) / 4 + 4;
  auto info = sniff_image(base64_decode(m.content, 64 * 1024));
  if (!info || info->width <= 0 || info->height <= 0) return 1000;
  size_t t = static_cast<size_t>(info->width) * static_cast<size_t>(info->height) / 750;
  return std::min<size_t>(1600, std::max<size_t>(85, t));
}

}  // namespace oishell::agent
