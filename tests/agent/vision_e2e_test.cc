// End to end: images reach a model that can see in its API's form, from a path typed into the prompt and from a
// block that displays a figure (the python executor sends it through the executor protocol: here a stand-in for
// matplotlib.pyplot, which the driver's figure hook drives as it would the real one). A model that cannot see gets
// a description; the saved conversation keeps the image as Open Interpreter does.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

constexpr const char* kPng1x1 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

// A block that leaves a figure open, as `plt.plot(...)` without `plt.show()` would: the driver's hook saves it as a
// PNG and sends it up the executor protocol at the end of the block. matplotlib need not be installed.
std::string figure_block() {
  return std::string(
             "import sys, types, base64\n"
             "PNG = base64.b64decode('") +
         kPng1x1 +
         "')\n"
         "class Figure:\n"
         "    def savefig(self, buf, format=None, **kw):\n"
         "        buf.write(PNG)\n"
         "plt = types.ModuleType('matplotlib.pyplot')\n"
         "open_figures = [1]\n"
         "plt.get_fignums = lambda: list(open_figures)\n"
         "plt.figure = lambda num=None: Figure()\n"
         "plt.close = lambda *a: open_figures.clear()\n"
         "plt.show = lambda *a, **k: None\n"
         "sys.modules['matplotlib.pyplot'] = plt\n"
         "print('figure drawn')\n";
}

class VisionE2E : public ::testing::Test {
 protected:
  RunResult run(ScriptedServer& server, const std::string& model, std::vector<std::string> extra) {
    RunOptions o;
    o.args = {"--model", model, "--api_base", server.base(), "--plain"};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    o.env = {{"OPENAI_API_KEY", "sk-vision"}, {"ANTHROPIC_API_KEY", "ak-vision"}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    RunResult r = run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << r.out << r.err;
    return r;
  }
  std::string write_png(const std::string& name) {
    std::string path = workspace_.path() + "/" + name;
    std::string b64 = kPng1x1, bytes;
    // Decoded by the shell's base64 would need a process: decode here.
    static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned acc = 0;
    int bits = 0;
    for (char c : b64) {
      if (c == '=') break;
      acc = (acc << 6) | static_cast<unsigned>(alphabet.find(c));
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes += static_cast<char>((acc >> bits) & 0xFF);
      }
    }
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  // Every OpenAI image_url / Anthropic image block of a request body.
  static std::vector<json> images_in(const json& body) {
    std::vector<json> out;
    for (const auto& m : body["messages"]) {
      if (!m["content"].is_array()) continue;
      for (const auto& part : m["content"]) {
        if (part.value("type", "") == "image_url" || part.value("type", "") == "image") out.push_back(part);
      }
    }
    return out;
  }
  TempDir workspace_, home_;
};

TEST_F(VisionE2E, PromptPathReachesOpenAiAsAnImageUrlPart) {
  std::string path = write_png("my chart.png");  // a space, as dropped files often have
  ScriptedServer server(json::array({say("A single pixel.")}));
  RunResult r = run(server, "gpt-4o", {"what is in '" + path + "'?"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(1u, server.requests().size());
  json body = server.requests()[0]["body"];
  auto images = images_in(body);
  ASSERT_EQ(1u, images.size()) << body.dump(1);
  EXPECT_EQ(std::string("data:image/png;base64,") + kPng1x1, images[0]["image_url"]["url"]);
  // In the user's message, after the words.
  const json& user = body["messages"].back();
  EXPECT_EQ("user", user["role"]);
  EXPECT_EQ("text", user["content"][0]["type"]);
  EXPECT_NE(std::string::npos, user["content"][0]["text"].get<std::string>().find("what is in"));
  EXPECT_NE(std::string::npos, r.out.find("attached")) << r.out;
  // Saved as Open Interpreter saves images.
  json saved = saved_conversation(home_.path());
  bool found = false;
  for (const auto& m : saved) {
    found = found || (m["type"] == "image" && m["format"] == "base64.png" && m["content"] == kPng1x1);
  }
  EXPECT_TRUE(found) << saved.dump(1);
}

TEST_F(VisionE2E, PromptPathReachesAnthropicAsABase64ImageBlock) {
  std::string path = write_png("shot.png");
  json answer = say("A pixel.");
  answer["format"] = "anthropic";
  ScriptedServer server(json::array({answer}));
  RunResult r = run(server, "claude-3-5-sonnet-20241022", {"describe file://" + path});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(1u, server.requests().size());
  EXPECT_EQ("/v1/messages", server.requests()[0]["path"]);
  auto images = images_in(server.requests()[0]["body"]);
  ASSERT_EQ(1u, images.size()) << server.requests()[0]["body"].dump(1);
  EXPECT_EQ("base64", images[0]["source"]["type"]);
  EXPECT_EQ("image/png", images[0]["source"]["media_type"]);
  EXPECT_EQ(kPng1x1, images[0]["source"]["data"]);
}

TEST_F(VisionE2E, AFigureTheCodeDisplaysReachesOpenAi) {
  ScriptedServer server(json::array({tool("python", figure_block()), say("I see the figure.")}));
  RunResult r = run(server, "gpt-4o", {"plot something"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(2u, server.requests().size()) << r.out << r.err;
  EXPECT_TRUE(images_in(server.requests()[0]["body"]).empty());
  auto images = images_in(server.requests()[1]["body"]);
  ASSERT_EQ(1u, images.size()) << server.requests()[1]["body"].dump(1);
  EXPECT_EQ(std::string("data:image/png;base64,") + kPng1x1, images[0]["image_url"]["url"]);
  EXPECT_NE(std::string::npos, last_tool_output(server.requests()[1]["body"]).find("figure drawn"));
  json saved = saved_conversation(home_.path());
  bool found = false;
  for (const auto& m : saved) {
    found = found || (m["role"] == "computer" && m["type"] == "image" && m["format"] == "base64.png");
  }
  EXPECT_TRUE(found) << saved.dump(1);
}

TEST_F(VisionE2E, AFigureTheCodeDisplaysReachesAnthropic) {
  json first = tool("python", figure_block());
  first["format"] = "anthropic";
  json second = say("I see it.");
  second["format"] = "anthropic";
  ScriptedServer server(json::array({first, second}));
  RunResult r = run(server, "claude-sonnet-4-5", {"plot something"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(2u, server.requests().size()) << r.out << r.err;
  auto images = images_in(server.requests()[1]["body"]);
  ASSERT_EQ(1u, images.size()) << server.requests()[1]["body"].dump(1);
  EXPECT_EQ("image/png", images[0]["source"]["media_type"]);
  EXPECT_EQ(kPng1x1, images[0]["source"]["data"]);
}

TEST_F(VisionE2E, AModelThatCannotSeeGetsADescriptionUnlessTold) {
  ScriptedServer server(json::array({tool("python", figure_block()), say("ok"), say("ok")}));
  RunResult r = run(server, "scripted-model", {"plot something"});  // not a vision model by its name
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(2u, server.requests().size());
  json body = server.requests()[1]["body"];
  EXPECT_TRUE(images_in(body).empty()) << body.dump(1);
  EXPECT_NE(std::string::npos, conversation_text(body).find("PNG image, 1x1")) << conversation_text(body);
  // --llm_supports_vision: sent as an image.
  std::string path = write_png("p.png");
  ScriptedServer told(json::array({say("ok")}));
  r = run(told, "scripted-model", {"--llm_supports_vision", "look at " + path});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(1u, told.requests().size());
  EXPECT_EQ(1u, images_in(told.requests()[0]["body"]).size());
}

}  // namespace
}  // namespace oishell::agent::test
