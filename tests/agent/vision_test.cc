// Images: recognised by their magic bytes, found in what the user typed, read only as the user named them, sent in
// each API's form to models that can see and described to the others, and left out first (oldest first) when the
// context is full.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "agent/core/context.h"
#include "agent/llm/convert.h"
#include "agent/llm/image.h"
#include "agent/llm/prompt_images.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

// A 1x1 PNG.
constexpr const char* kPng1x1 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

std::string png_bytes() { return base64_decode(kPng1x1); }

// A PNG header claiming `w`x`h` (enough for sniffing and token counts).
std::string png_header(uint32_t w, uint32_t h) {
  std::string b("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16);
  for (uint32_t v : {w, h}) {
    for (int s = 24; s >= 0; s -= 8) b += static_cast<char>((v >> s) & 0xFF);
  }
  return b + std::string(16, '\0');
}

void write_file(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

TEST(Image, SniffedByMagicBytesWithTheirSize) {
  auto png = sniff_image(png_bytes());
  ASSERT_TRUE(png);
  EXPECT_EQ("png", png->format);
  EXPECT_EQ(1, png->width);
  EXPECT_EQ(1, png->height);
  std::string jpeg("\xFF\xD8\xFF\xE0\x00\x04\x00\x00\xFF\xC0\x00\x11\x08\x01\xE0\x02\x80", 17);
  jpeg += std::string(16, '\0');
  auto j = sniff_image(jpeg);
  ASSERT_TRUE(j);
  EXPECT_EQ("jpeg", j->format);
  EXPECT_EQ(640, j->width);
  EXPECT_EQ(480, j->height);
  auto gif = sniff_image(std::string("GIF89a\x20\x00\x10\x00", 10));
  ASSERT_TRUE(gif);
  EXPECT_EQ(32, gif->width);
  EXPECT_EQ(16, gif->height);
  EXPECT_EQ("webp", sniff_image(std::string("RIFF\0\0\0\0WEBPVP8X", 16) + std::string(14, '\0'))->format);
  EXPECT_FALSE(sniff_image("#!/bin/sh\necho not an image\n"));
  EXPECT_EQ(png_bytes(), base64_decode(base64_encode(png_bytes())));
  EXPECT_EQ(kPng1x1, base64_encode(png_bytes()));
}

TEST(PromptImages, PathsAsTypedQuotedEscapedOrDropped) {
  auto paths = image_paths_in_prompt(
      "compare '/tmp/My Pictures/a b.png' with \"/tmp/c d.JPG\", /tmp/e\\ f.webp and file:///tmp/g%20h.gif, "
      "also ~/shot.png. Then make plot.png and read notes.txt",
      "/home/u");
  std::vector<std::string> got;
  for (const auto& p : paths) got.push_back(p.path);
  EXPECT_EQ((std::vector<std::string>{"/tmp/My Pictures/a b.png", "/tmp/c d.JPG", "/tmp/e f.webp", "/tmp/g h.gif",
                                      "/home/u/shot.png", "plot.png"}),
            got);
  EXPECT_TRUE(paths[0].explicit_path);
  EXPECT_FALSE(paths.back().explicit_path);
}

TEST(PromptImages, ReadOnlyRegularImageFilesByTheirRealPath) {
  test::TempDir dir;
  std::string good = dir.path() + "/my chart.png";
  write_file(good, png_bytes());
  auto m = read_prompt_image(good);
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_EQ("user", m->role);
  EXPECT_EQ("image", m->type);
  EXPECT_EQ("base64.png", m->format);
  EXPECT_EQ(kPng1x1, m->content);
  // A symbolic link (the sandbox could plant one in the workspace) is not followed; the file it names stays unread.
  std::string link = dir.path() + "/link.png";
  ASSERT_EQ(0, ::symlink(good.c_str(), link.c_str()));
  auto via_link = read_prompt_image(link);
  ASSERT_FALSE(via_link);
  EXPECT_NE(std::string::npos, via_link.status().message().find("symbolic link")) << via_link.status().message();
  // Not an image by its bytes, whatever its name says.
  std::string fake = dir.path() + "/secret.png";
  write_file(fake, "PRIVATE KEY material\n");
  EXPECT_FALSE(read_prompt_image(fake));
  // Too large for the APIs.
  std::string big = dir.path() + "/big.png";
  write_file(big, png_bytes() + std::string(kMaxPromptImageBytes, '\0'));
  EXPECT_FALSE(read_prompt_image(big));
  // In a prompt: the good one attached, the others reported, a missing one not mentioned.
  auto loaded = load_prompt_images("'" + good + "' '" + link + "' " + fake + " " + dir.path() + "/missing.png",
                                   dir.path());
  ASSERT_EQ(3u, loaded.size());
  EXPECT_TRUE(loaded[0].message);
  EXPECT_FALSE(loaded[1].message);
  EXPECT_FALSE(loaded[2].problem.empty());
}

std::vector<Message> conversation_with_images() {
  Message user_image{"user", "image", "base64.png", kPng1x1, ""};
  Message code_image{"computer", "image", "base64.png", kPng1x1, ""};
  return {Message::user("what is in this picture?"), user_image, Message::code("python", "plot()", "c1"),
          Message::console("done", "c1"), code_image};
}

TEST(ImageWireFormat, OpenAiImageUrlPartsOrADescription) {
  json j = to_openai_messages("sys", conversation_with_images(), true, /*vision=*/true);
  ASSERT_EQ(5u, j.size()) << j.dump(1);  // system, user (words and image), tool call, tool result, user (image)
  // The user's words and image as one message.
  EXPECT_EQ("user", j[1]["role"]);
  ASSERT_TRUE(j[1]["content"].is_array());
  EXPECT_EQ("text", j[1]["content"][0]["type"]);
  EXPECT_EQ("what is in this picture?", j[1]["content"][0]["text"]);
  EXPECT_EQ("image_url", j[1]["content"][1]["type"]);
  EXPECT_EQ(std::string("data:image/png;base64,") + kPng1x1, j[1]["content"][1]["image_url"]["url"]);
  EXPECT_EQ("tool", j[3]["role"]);
  // The code's image follows its tool result as a user message (tool results carry text only).
  EXPECT_EQ("user", j[4]["role"]);
  EXPECT_EQ("image_url", j[4]["content"][1]["type"]);
  // A model that cannot see: what the image is, in words.
  j = to_openai_messages("sys", conversation_with_images(), true, /*vision=*/false);
  EXPECT_NE(std::string::npos, j.dump().find("PNG image, 1x1")) << j.dump(1);
  EXPECT_EQ(std::string::npos, j.dump().find(kPng1x1));
}

TEST(ImageWireFormat, AnthropicBase64ImageBlocks) {
  json j = to_anthropic_messages(conversation_with_images(), true, /*vision=*/true);
  ASSERT_EQ(3u, j.size()) << j.dump(1);
  EXPECT_EQ("text", j[0]["content"][0]["type"]);
  json image = j[0]["content"][1];
  EXPECT_EQ("image", image["type"]);
  EXPECT_EQ("base64", image["source"]["type"]);
  EXPECT_EQ("image/png", image["source"]["media_type"]);
  EXPECT_EQ(kPng1x1, image["source"]["data"]);
  // The code's image joins the tool result's user message, after it.
  EXPECT_EQ("tool_result", j[2]["content"][0]["type"]);
  EXPECT_EQ("image", j[2]["content"].back()["type"]);
  j = to_anthropic_messages(conversation_with_images(), true, /*vision=*/false);
  EXPECT_EQ(std::string::npos, j.dump().find(kPng1x1));
  EXPECT_NE(std::string::npos, j.dump().find("The code displayed an image"));
}

TEST(ImageContext, ImagesCountTheirPixelsAndOldOnesGoFirst) {
  Message big{"computer", "image", "base64.png", base64_encode(png_header(1000, 750)), ""};  // 1000 tokens
  EXPECT_EQ(1000u + 4u, estimate_tokens(big));
  Message huge{"user", "image", "base64.png", base64_encode(png_header(8000, 8000)), ""};
  EXPECT_EQ(1600u + 4u, estimate_tokens(huge));  // capped as the APIs scale large images down
  // Not its base64 text: a 3 MB image counts the same as a small one of its size.
  Message padded{"user", "image", "base64.png", base64_encode(png_header(1000, 750) + std::string(3 << 20, 'x')), ""};
  EXPECT_EQ(estimate_tokens(big), estimate_tokens(padded));

  std::vector<Message> m = {Message::user("first"), big, Message::assistant("seen"), Message::user("second"), big,
                            Message::assistant("seen too")};
  // Room for the words and one image: the older image becomes a description, every message stays.
  Trimmed t = trim_to_window("", m, 1500, 0);
  EXPECT_EQ(0u, t.dropped);
  EXPECT_EQ(1u, t.images_dropped);
  ASSERT_EQ(6u, t.messages.size());
  EXPECT_FALSE(is_image_data(t.messages[1]));
  EXPECT_NE(std::string::npos, t.messages[1].content.find("left out")) << t.messages[1].content;
  EXPECT_TRUE(is_image_data(t.messages[4]));
}

}  // namespace
}  // namespace oishell::agent
