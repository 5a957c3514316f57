// End to end, computer use (`interpreter --os`): a scripted model starts a small X11 application (computer/form_app.py)
// inside the sandbox, takes a screenshot of the virtual display, clicks the text field by its coordinates, types,
// clicks Save, and the application's output file is checked on disk. The screenshot the model received is checked
// in each provider's form (Anthropic: an image inside the tool's result, with the native computer tool and its beta
// header; OpenAI-compatible: the `computer` function and an image_url after the tool's message), at the display's
// size and showing the application (its red background). The virtual display is the only screen: the host's X
// socket the test creates is not there inside.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/base64.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

json computer(const json& action) {
  return {{"tool_calls", json::array({{{"name", "computer"}, {"arguments", action.dump()}}})}};
}

// Starts the form application and waits until its window is up.
const char* kStartApp =
    "import subprocess, time, os\n"
    "app = subprocess.Popen(['python3', 'form_app.py'])\n"
    "for _ in range(200):\n"
    "    if os.path.exists('form-ready'): break\n"
    "    time.sleep(0.05)\n"
    "print('app up' if os.path.exists('form-ready') else 'app did not start')\n";

// The PNG's width, height and the colour of one pixel, read by python's zlib (8-bit RGB, filter 0 rows: what the
// computer writes).
std::string png_facts(const std::string& png, int x, int y) {
  TempDir dir;
  const std::string path = dir.path() + "/shot.png";
  std::ofstream(path, std::ios::binary) << png;
  const std::string script =
      "import struct, sys, zlib\n"
      "d = open(sys.argv[1], 'rb').read()\n"
      "w, h = struct.unpack('>II', d[16:24])\n"
      "pos, idat = 8, b''\n"
      "while pos < len(d):\n"
      "    n = struct.unpack('>I', d[pos:pos+4])[0]; kind = d[pos+4:pos+8]\n"
      "    if kind == b'IDAT': idat += d[pos+8:pos+8+n]\n"
      "    pos += 12 + n\n"
      "raw = zlib.decompress(idat)\n"
      "x, y = int(sys.argv[2]), int(sys.argv[3])\n"
      "o = y * (w * 3 + 1) + 1 + x * 3\n"
      "print('%dx%d %d,%d,%d' % (w, h, raw[o], raw[o+1], raw[o+2]), end='')\n";
  RunOptions o;
  o.program = "/usr/bin/python3";
  o.args = {"-c", script, path, std::to_string(x), std::to_string(y)};
  o.cwd = dir.path();
  o.home = dir.path();
  return run_interpreter(o).out;
}

class ComputerE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy_file(COMPUTER_TEST_APP, workspace_.path() + "/form_app.py");
  }
  RunResult run(ScriptedServer& server, const std::string& model, const std::string& prompt) {
    RunOptions o;
    o.args = {"--model", model, "--api_base", server.base(), "--plain", "--os", "-y", prompt};
    o.env = {{"OPENAI_API_KEY", "sk-computer"}, {"ANTHROPIC_API_KEY", "ak-computer"},
             {"OISHELL_COMPUTER_SETTLE", "0.2"}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.timeout_ms = 120000;
    RunResult r = run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << r.out << r.err;
    return r;
  }
  TempDir workspace_, home_;
};

// A host X socket of the test's own, where the host's display would be: visible on the host, absent inside.
class HostXSocket {
 public:
  HostXSocket() {
    // Exists already on a host with a display; made (world-writable, sticky, as X makes it) and removed otherwise.
    if (::mkdir("/tmp/.X11-unix", 01777) == 0) {
      made_dir_ = true;
      ::chmod("/tmp/.X11-unix", 01777);  // past the umask
    }
    number_ = 60 + static_cast<int>(::getpid() % 30);
    path_ = "/tmp/.X11-unix/X" + std::to_string(number_);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    ok_ = ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd_, 4) == 0;
  }
  ~HostXSocket() {
    ::close(fd_);
    if (ok_) ::unlink(path_.c_str());
    if (made_dir_) ::rmdir("/tmp/.X11-unix");
  }
  bool ok() const { return ok_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1, number_ = 0;
  bool ok_ = false, made_dir_ = false;
  std::string path_;
};

TEST_F(ComputerE2E, AnthropicModelFillsAFormOnTheVirtualDisplay) {
  HostXSocket host_x;
  ASSERT_TRUE(host_x.ok()) << host_x.path();
  const std::string check =
      "import os, socket, errno\n"
      "print('output:', open('form-output.txt').read())\n"
      "print('DISPLAY', os.environ.get('DISPLAY'))\n"
      "s = socket.socket(socket.AF_UNIX)\n"
      "try:\n    s.connect('" + host_x.path() + "'); print('host X reached')\n"
      "except OSError as e: print('host X:', errno.errorcode[e.errno])\n"
      "v = socket.socket(socket.AF_UNIX)\n"
      "v.connect('/tmp/.X11-unix/X' + os.environ['DISPLAY'][1:]); print('virtual X: connected')\n";
  json script = json::array({
      tool("python", kStartApp, "Starting the form."),
      computer({{"action", "screenshot"}}),
      computer({{"action", "left_click"}, {"coordinate", {300, 120}}}),
      computer({{"action", "type"}, {"text", "hello from the model"}}),
      computer({{"action", "left_click"}, {"coordinate", {180, 225}}}),
      tool("python", check),
      say("The form is saved. The task is done."),
  });
  for (auto& step : script) step["format"] = "anthropic";
  ScriptedServer server(script);
  RunResult r = run(server, "claude-sonnet-4-5", "Fill in the form with a greeting and save it.");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_EQ("hello from the model", read_text(workspace_.path() + "/form-output.txt")) << r.out << r.err;

  auto requests = server.requests();
  ASSERT_GE(requests.size(), 7u) << r.out << r.err;
  // The native tool at the display's size, and its beta header.
  const json& first = requests[0]["body"];
  bool native = false;
  for (const auto& t : first["tools"]) {
    if (t.value("type", "") == "computer_20250124" && t.value("name", "") == "computer") {
      native = t["display_width_px"] == 1024 && t["display_height_px"] == 768;
    }
  }
  EXPECT_TRUE(native) << first["tools"].dump();
  EXPECT_NE(std::string::npos, requests[0]["headers"].dump().find("computer-use-2025-01-24"))
      << requests[0]["headers"].dump();
  EXPECT_NE(std::string::npos, first["system"].get<std::string>().find("THE COMPUTER"));

  // The screenshot: inside the computer call's tool_result, a 1024x768 PNG of the application (red at 700, 500).
  const json& after_shot = requests[2]["body"]["messages"].back();
  ASSERT_EQ("user", after_shot["role"]);
  const json& result = after_shot["content"].back();
  ASSERT_EQ("tool_result", result["type"]) << after_shot.dump().substr(0, 2000);
  ASSERT_TRUE(result["content"].is_array()) << result.dump().substr(0, 2000);
  const json& image = result["content"].back();
  ASSERT_EQ("image", image["type"]);
  EXPECT_EQ("image/png", image["source"]["media_type"]);
  auto png = base64_decode(image["source"]["data"].get<std::string>());
  ASSERT_TRUE(png.has_value());
  EXPECT_EQ("1024x768 200,30,30", png_facts(*png, 700, 500));
  // Each later action answered with a screenshot too; the typed text is in the one after Save was clicked? (the
  // window is gone by then: the screen is the bare root window again, not red).
  const json& after_save = requests[5]["body"]["messages"].back()["content"].back();
  ASSERT_EQ("tool_result", after_save["type"]);
  auto last_png = base64_decode(after_save["content"].back()["source"]["data"].get<std::string>());
  ASSERT_TRUE(last_png.has_value());
  EXPECT_NE("1024x768 200,30,30", png_facts(*last_png, 700, 500));

  // The check block: the virtual display is the one screen; the host's X socket is not there.
  const std::string told = last_tool_output(requests[6]["body"]);
  EXPECT_NE(std::string::npos, told.find("output: hello from the model")) << told;
  EXPECT_NE(std::string::npos, told.find("DISPLAY :")) << told;
  EXPECT_NE(std::string::npos, told.find("host X: ENOENT")) << told;
  EXPECT_NE(std::string::npos, told.find("virtual X: connected")) << told;
  // The user saw each action in words.
  EXPECT_NE(std::string::npos, r.out.find("left_click (300, 120)")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("type \"hello from the model\"")) << r.out;
}

TEST_F(ComputerE2E, OpenAiModelGetsTheFunctionAndTheScreenshotAsAnImage) {
  json script = json::array({
      computer({{"action", "left_click"}, {"coordinate", {5000, 10}}}),  // off the screen: refused, not run
      computer({{"action", "screenshot"}}),
      say("I see the screen. The task is done."),
  });
  ScriptedServer server(script);
  RunResult r = run(server, "gpt-4o", "Look at the screen.");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto requests = server.requests();
  ASSERT_EQ(3u, requests.size()) << r.out << r.err;
  bool function = false;
  for (const auto& t : requests[0]["body"]["tools"]) {
    if (t.value("type", "") == "function" && t["function"].value("name", "") == "computer") function = true;
  }
  EXPECT_TRUE(function) << requests[0]["body"]["tools"].dump();
  EXPECT_NE(std::string::npos, last_tool_output(requests[1]["body"]).find("`coordinate` is off the screen"))
      << last_tool_output(requests[1]["body"]);
  // The tool's message, then the screenshot as an image of the user's.
  const json& messages = requests[2]["body"]["messages"];
  const json& image_message = messages.back();
  ASSERT_EQ("user", image_message["role"]) << messages.dump().substr(0, 2000);
  std::string url;
  for (const auto& part : image_message["content"]) {
    if (part.value("type", "") == "image_url") url = part["image_url"]["url"].get<std::string>();
  }
  ASSERT_TRUE(url.starts_with("data:image/png;base64,")) << url.substr(0, 80);
  auto png = base64_decode(url.substr(std::string("data:image/png;base64,").size()));
  ASSERT_TRUE(png.has_value());
  EXPECT_EQ("1024x768", png_facts(*png, 10, 10).substr(0, 8));
  EXPECT_EQ("tool", messages[messages.size() - 2]["role"]);
}

}  // namespace
}  // namespace oishell::agent::test
