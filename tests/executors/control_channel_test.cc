// The executor control channel under attack from the block's own code, end to end, in both modes (--sandbox none
// and the real sandbox). The python driver shares its process with the block, so the block can find the control
// socket (/proc/self/fd, or the driver's `CTL` global) and write anything to it: the supervisor, which runs outside
// the sandbox and its memory limit, must not grow with what arrives, and a forged line may say no more than the
// block's own output could.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/executors/supervisor_client.h"

namespace oishell::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// The peak resident set (VmHWM) of `pid` in KiB, from /proc/PID/status on the host; -1 when unreadable.
long peak_rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// The error events that report dropped control lines of `kind` from `language`'s executor.
size_t drop_reports(SupervisorClient& c, const std::string& kind, const std::string& language) {
  size_t n = 0;
  for (const auto& e : c.events()) {
    if (e.value("event", "") == "error" && e.value("kind", "") == kind && e.value("language", "") == language) ++n;
  }
  return n;
}

// Python that finds the control socket the way code in the sandbox would (the one socket among its fds; the driver
// moved it to a high fd) and writes `megabytes` MiB of 'x' to it, then `tail`, and prints, in one last statement:
// the driver reports the active line before every statement, and the newline of its `L` line would end the flood.
std::string flood_code(int megabytes, const std::string& tail) {
  return "import collections, os, socket\n"
         "def _link(n):\n"
         "    try:\n"
         "        return os.readlink('/proc/self/fd/' + n)\n"
         "    except OSError:\n"
         "        return ''\n"
         "ctl = [int(n) for n in os.listdir('/proc/self/fd') if int(n) > 2 and _link(n).startswith('socket:')]\n"
         "sock = socket.socket(fileno=os.dup(ctl[0]))\n"
         "chunk = b'x' * (1 << 20)\n"
         "_ = (collections.deque((sock.sendall(chunk) for _ in range(" +
         std::to_string(megabytes) + ")), maxlen=0), sock.sendall(" + tail + "), print('flooded', len(ctl)))\n";
}

// The driver's globals give the control fd and the running block's seq; `lines` is a python list expression.
std::string forge_code(const std::string& lines) {
  return "import os, time\n"
         "_g = __oishell_line__.__globals__\n"
         "fd, seq = _g['CTL'], _g['_state']['seq']\n"
         "os.write(fd, ''.join(l + '\\n' for l in " +
         lines +
         ").encode())\n"
         "time.sleep(0.3)\n"
         "print('after')\n";
}

// A 1x1 PNG, base64.
constexpr const char* kTinyPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=";

class ControlChannelTest : public SupervisorModeTest {};

TEST_P(ControlChannelTest, OversizedLinesAreDroppedWithoutGrowingTheSupervisor) {
  auto c = start();
  ASSERT_EQ("ok", c->run("python", "1").done.value("status", ""));  // the executor is up: measure from here
  const long before = peak_rss_kib(c->pid());
  ASSERT_GT(before, 0) << "cannot read VmHWM of the supervisor";
  // 200 MiB without a newline, then a second line of 20 MiB: both over the 16 MiB bound.
  auto flood = c->run("python", flood_code(200, "b'\\n' + b'y' * (20 << 20) + b'\\n'"), 300s);
  const long after = peak_rss_kib(c->pid());
  EXPECT_EQ("ok", flood.done.value("status", "")) << flood.done.dump() << flood.err;
  EXPECT_EQ("flooded 1\n", flood.out) << flood.err;
  // The supervisor keeps at most one line of 16 MiB, in one buffer allocated once; 64 MiB leaves room for the
  // allocator and the events. Without the bound it held the whole line: +400 MiB for these 200 MiB (the buffer
  // doubling to 256 MiB plus the copy), and the flood took 46-88 s instead of 0.4 s because every read searched the
  // whole buffer for a newline.
  EXPECT_LT(after - before, 64 * 1024) << "supervisor VmHWM grew from " << before << " KiB to " << after << " KiB";
  RecordProperty("supervisor_vmhwm_growth_kib", std::to_string(after - before));
  RecordProperty("flood_block_ms", std::to_string(flood.done.value("duration_ms", 0)));
  EXPECT_EQ(1u, drop_reports(*c, "control_line_oversized", "python")) << "reported once per executor start";
  EXPECT_EQ(0u, drop_reports(*c, "control_line_malformed", "python"));
  // The lines that follow (the driver's own `L` and `D`, and this block) still work.
  auto next = c->run("python", "6 * 7");
  EXPECT_EQ("42\n", next.out) << next.err;
  EXPECT_EQ("ok", next.done.value("status", ""));
}

TEST_P(ControlChannelTest, AnUnterminatedLineSwallowsOnlyItsOwnBlocksDone) {
  auto c = start({"--timeout", "2s"});
  ASSERT_EQ("ok", c->run("python", "1").done.value("status", ""));
  const long before = peak_rss_kib(c->pid());
  // No newline: the driver's own `D` line, the next thing it sends, becomes the end of the dropped line, so the
  // block ends at its wall time (SIGINT does nothing between blocks; SIGKILL 2 s later) and the executor restarts.
  // That is all the block can do with this, to itself; the supervisor stays small (without the bound it held the
  // whole flood, and the same done was lost the same way).
  auto r = c->run("python", flood_code(64, "b''"), 60s);
  EXPECT_EQ("timeout", r.done.value("status", "")) << r.done.dump();
  EXPECT_LT(peak_rss_kib(c->pid()) - before, 64 * 1024);
  EXPECT_EQ(1u, drop_reports(*c, "control_line_oversized", "python"));
  EXPECT_FALSE(c->wait_event("executor_restarted", 10s).is_null());
  EXPECT_EQ("3\n", c->run("python", "1 + 2").out);
}

TEST_P(ControlChannelTest, MalformedLinesAreDroppedAndReportedOncePerExecutorStart) {
  auto c = start();
  const std::string bad =
      "['I %s gif R0lGODlhAQABAAAAACw=' % seq, 'I %s svg PHN2Zz4=' % seq, 'I %s png !!!!' % seq,"
      " 'I %s png iVBORw0KGgo' % seq, 'I %s png aGVsbG8gd29ybGQ=' % seq,"
      " 'D %s ok zero' % seq, 'D %s ok 99999999999' % seq, 'D %s finished 0' % seq, 'D %s ok 0 extra' % seq,"
      " 'L %s -3' % seq, 'R now', 'garbage', '']";
  auto r = c->run("python", forge_code(bad));
  // Without validation `D <seq> ok zero` ended the block at once (atoi gave 0): its done came before `after` was
  // printed; and the gif, the svg and the non-image reached the client as `image` events.
  EXPECT_EQ("after\n", r.out) << r.err;
  EXPECT_EQ("ok", r.done.value("status", "")) << r.done.dump();
  EXPECT_EQ(0, r.done.value("exit_code", -1));
  for (const auto& e : r.events) EXPECT_NE("image", e.value("event", "")) << e.dump().substr(0, 200);
  EXPECT_EQ(1u, drop_reports(*c, "control_line_malformed", "python"));
  for (const auto& e : c->events()) {
    if (e.value("kind", "") != "control_line_malformed") continue;
    EXPECT_FALSE(e.contains("id")) << "an error with the block's id would make a client give the block up";
    EXPECT_EQ(std::string::npos, e.value("message", "").find("gif")) << "the report quotes what the sandbox wrote";
  }

  // More of them in the next block: no second report from the same executor process; the block works.
  auto again = c->run("python", forge_code("['garbage', 'D %s ok zero' % seq]"));
  EXPECT_EQ("after\n", again.out);
  EXPECT_EQ(1u, drop_reports(*c, "control_line_malformed", "python"));

  // A new executor process reports again.
  c->send({{"op", "reset"}, {"language", "python"}});
  ASSERT_FALSE(c->wait_event("executor_restarted", 10s).is_null());
  EXPECT_EQ("after\n", c->run("python", forge_code("['garbage']")).out);
  EXPECT_EQ(2u, drop_reports(*c, "control_line_malformed", "python"));

  // The shell driver keeps its socket in $__oi_ctl, which the block can use too; reported for shell.
  auto s = c->run("shell", "printf 'garbage\\nD 99 ok\\n' >&\"$__oi_ctl\"; echo fine");
  EXPECT_EQ("fine\n", s.out) << s.err;
  EXPECT_EQ("ok", s.done.value("status", ""));
  EXPECT_EQ(1u, drop_reports(*c, "control_line_malformed", "shell"));
}

TEST_P(ControlChannelTest, WellFormedImagesAreAccepted) {
  auto c = start();
  // The neighbour of the refused images: a valid forged `I` line for its own block is an image of that block.
  auto forged = c->run("python", forge_code(std::string("['I %s png ") + kTinyPng + "' % seq]"));
  ASSERT_EQ("after\n", forged.out) << forged.err;
  size_t images = 0;
  for (const auto& e : forged.events) {
    if (e.value("event", "") != "image") continue;
    ++images;
    EXPECT_EQ("png", e.value("format", ""));
    EXPECT_EQ(kTinyPng, e.value("data", ""));
  }
  EXPECT_EQ(1u, images);

  // The driver's own display path (the figures pyplot holds at the end of a block), with a stand-in for pyplot
  // (matplotlib need not be installed): a 6 MiB PNG becomes an 8 MiB line, read over many wake-ups and accepted.
  const std::string fake_pyplot =
      "import base64, os, sys, types\n"
      "png = base64.b64decode('" + std::string(kTinyPng) + "') + os.urandom(6 << 20)\n"
      "plt = types.ModuleType('matplotlib.pyplot')\n"
      "class Figure:\n"
      "    def savefig(self, buf, format=None, **kwargs):\n"
      "        buf.write(png)\n"
      "plt.get_fignums = lambda: [] if getattr(plt, 'closed', False) else [1]\n"
      "plt.figure = lambda num=None: Figure()\n"
      "def close(which=None):\n"
      "    plt.closed = True\n"
      "plt.close = close\n"
      "plt.show = lambda *a, **k: None\n"
      "sys.modules['matplotlib.pyplot'] = plt\n"
      "expected = base64.b64encode(png).decode()\n"
      "print(len(expected), expected[1000:1040], expected[-40:])\n";
  auto shown = c->run("python", fake_pyplot, 60s);
  ASSERT_EQ("ok", shown.done.value("status", "")) << shown.err;
  images = 0;
  for (const auto& e : shown.events) {
    if (e.value("event", "") != "image") continue;
    ++images;
    const std::string data = e.value("data", "");
    EXPECT_EQ("png", e.value("format", ""));
    ASSERT_GT(data.size(), 8u << 20);
    EXPECT_EQ(std::to_string(data.size()) + " " + data.substr(1000, 40) + " " + data.substr(data.size() - 40) + "\n",
              shown.out);
  }
  EXPECT_EQ(1u, images);

  // A figure over the 12 MiB the supervisor takes: the driver says so on stderr instead of sending a line the
  // supervisor would drop (and report as if the block had written to the socket).
  auto too_big = c->run("python", "png = png[:70] + os.urandom(13 << 20)\nplt.closed = False", 60s);
  EXPECT_EQ("ok", too_big.done.value("status", "")) << too_big.err;
  EXPECT_NE(std::string::npos, too_big.err.find("figure 1 not shown")) << too_big.err;
  for (const auto& e : too_big.events) EXPECT_NE("image", e.value("event", ""));
  EXPECT_EQ(0u, drop_reports(*c, "control_line_malformed", "python"));
  EXPECT_EQ(0u, drop_reports(*c, "control_line_oversized", "python"));
}

TEST_P(ControlChannelTest, AForgedDoneLiesOnlyAboutItsOwnBlock) {
  auto c = start();
  // A well-formed `D` for the running block ends it early with the code it names: the lie a block can tell about
  // itself (its output can claim anything too). Its code goes on; what it prints then lands in the next block, as
  // a background job's output does; its real `D` is about an earlier block by then and is ignored.
  const std::string id = c->next_id();
  c->send({{"op", "exec"}, {"id", id}, {"language", "python"},
           {"code", "import os, time\n"
                    "_g = __oishell_line__.__globals__\n"
                    "os.write(_g['CTL'], ('D %s ok 7\\n' % _g['_state']['seq']).encode())\n"
                    "time.sleep(0.5)\n"
                    "print('late')\n"}});
  auto early = c->collect(id, 20s);
  EXPECT_EQ("ok", early.done.value("status", "")) << early.done.dump();
  EXPECT_EQ(7, early.done.value("exit_code", -1));
  auto next = c->run("python", "print('next')");
  EXPECT_EQ("ok", next.done.value("status", ""));
  EXPECT_TRUE(next.out.ends_with("next\n")) << next.out;
  size_t dones = 0;
  for (const auto& e : c->events()) dones += e.value("event", "") == "done" && e.value("id", "") == id;
  EXPECT_EQ(1u, dones) << "the block's real done line must be ignored";
}

TEST_P(ControlChannelTest, EveryDoneTheDriversSendIsWellFormed) {
  auto c = start({"--timeout", "20s"});
  // sys.exit takes any integer; the driver reports one outside the 32-bit range as 1. Sent as it was, its `D` line
  // would be refused as malformed and the block would end only at its wall time.
  auto huge = c->run("python", "import sys\nsys.exit(2 ** 40)");
  EXPECT_EQ("error", huge.done.value("status", "")) << huge.done.dump();
  EXPECT_EQ(1, huge.done.value("exit_code", 0));
  auto negative = c->run("python", "raise SystemExit(-5)");
  EXPECT_EQ(-5, negative.done.value("exit_code", 0)) << negative.done.dump();
  EXPECT_EQ(255, c->run("shell", "(exit 255)").done.value("exit_code", 0));
  EXPECT_EQ(0u, drop_reports(*c, "control_line_malformed", "python"));
  EXPECT_EQ(0u, drop_reports(*c, "control_line_malformed", "shell"));
}

INSTANTIATE_TEST_SUITE_P(Modes, ControlChannelTest, ::testing::Values("none", "openshell"),
                         [](const auto& info) { return info.param == "none" ? "NoSandbox" : "Sandbox"; });

}  // namespace
}  // namespace oishell::test
