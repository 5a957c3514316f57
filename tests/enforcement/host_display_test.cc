// The host's screen, input and session bus never reach a sandbox (docs/guarantees.md): code that could drive the
// user's real desktop (type into a terminal, read the clipboard, click "allow") is the most dangerous code an agent
// can run, so a display is only ever one of the sandbox's own (issue 18's computer use). What a desktop session
// offers and how each is closed:
//   DISPLAY, WAYLAND_DISPLAY, XAUTHORITY, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS   not in the environment (the
//       sandbox's environment is built from the policy's pass-list)
//   /tmp/.X11-unix/X<N> (an X server's socket)        the sandbox's /tmp is its own
//   @/tmp/.X11-unix/X<N> (its abstract twin)          abstract sockets belong to the network namespace
//   /run/user/<uid> (Wayland, PulseAudio, the session bus), /run/dbus (the system bus)   /run is not mounted
//   /dev/input, /dev/uinput, /dev/dri, /dev/snd       /dev holds the null, zero, random, tty and pts nodes only
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

// Sets variables for the test's duration (the sandbox inherits the test's environment, as from a user's shell).
class ScopedEnv {
 public:
  explicit ScopedEnv(std::vector<std::pair<std::string, std::string>> vars) {
    for (auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (auto& [name, value] : saved_) {
      if (value) ::setenv(name.c_str(), value->c_str(), 1);
      else ::unsetenv(name.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A listening unix socket at `name` (abstract when it starts with '@'), closed (and unlinked) when it goes.
class Listening {
 public:
  explicit Listening(const std::string& name) : abstract_(name[0] == '@'), name_(abstract_ ? name.substr(1) : name) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + (abstract_ ? 1 : 0), name_.data(), name_.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + (abstract_ ? 1 : 0) + name_.size());
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 && ::listen(fd_, 8) == 0;
    error_ = ok_ ? 0 : errno;
  }
  ~Listening() {
    if (fd_ >= 0) ::close(fd_);
    if (ok_ && !abstract_) ::unlink(name_.c_str());
  }
  bool ok() const { return ok_; }
  int error() const { return error_; }

 private:
  bool abstract_;
  std::string name_;
  int fd_ = -1;
  bool ok_ = false;
  int error_ = 0;
};

TEST(HostDisplay, TheSessionsDisplayAndBusVariablesDoNotReachTheSandbox) {
  const std::string runtime = "/run/user/" + std::to_string(::getuid());
  ScopedEnv session({{"DISPLAY", ":77"},
                     {"WAYLAND_DISPLAY", "wayland-7"},
                     {"XAUTHORITY", "/home/someone/.Xauthority"},
                     {"XDG_RUNTIME_DIR", runtime},
                     {"DBUS_SESSION_BUS_ADDRESS", "unix:path=" + runtime + "/bus"},
                     {"TERM", "xterm-from-the-test"}});
  SandboxWorkspace w;
  EXPECT_EQ(":77", probe_on_host({"getenv", "DISPLAY"}));  // the host's processes have them
  for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"}) {
    EXPECT_EQ("<unset>", w.probe({"getenv", name})) << name;
  }
  // The policy's pass-list still passes what it lists.
  EXPECT_EQ("xterm-from-the-test", w.probe({"getenv", "TERM"}));
}

TEST(HostDisplay, AnXServersSocketsAreNotReachable) {
  // An X server on the host: its socket in /tmp/.X11-unix and the abstract one beside it (a display number no real
  // server here uses).
  const std::string dir = "/tmp/.X11-unix";
  bool made_dir = false;
  if (::mkdir(dir.c_str(), 01777) == 0) {
    made_dir = true;
    ::chmod(dir.c_str(), 01777);
  }
  const std::string display = "X" + std::to_string(7000 + ::getpid() % 1000);
  {
    Listening path(dir + "/" + display);
    Listening abstract("@" + dir + "/" + display);
    ASSERT_TRUE(path.ok()) << std::strerror(path.error());
    ASSERT_TRUE(abstract.ok()) << std::strerror(abstract.error());
    EXPECT_EQ("ok", probe_on_host({"connect_unix", dir + "/" + display}));
    EXPECT_EQ("ok", probe_on_host({"connect_abstract", dir + "/" + display}));
    SandboxWorkspace w;
    EXPECT_EQ("ENOENT", w.probe({"connect_unix", dir + "/" + display}));
    EXPECT_EQ("ECONNREFUSED", w.probe({"connect_abstract", dir + "/" + display}));
    // A display of the sandbox's own works: a socket made inside, in its own /tmp.
    EXPECT_EQ("ok", w.probe({"self_unix", "/tmp/own-display"}));
    EXPECT_EQ("ok", w.probe({"self_unix", "@/tmp/.X11-unix/" + display}));
  }
  if (made_dir) ::rmdir(dir.c_str());
}

TEST(HostDisplay, NoInputDeviceGpuSoundOrSessionDirectory) {
  SandboxWorkspace w;
  for (const char* path : {"/dev/input", "/dev/uinput", "/dev/dri", "/dev/snd", "/dev/fb0", "/run/user",
                           "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket"}) {
    EXPECT_EQ("ENOENT", w.probe({"open", path, "r"})) << path;
  }
  EXPECT_EQ("ok", w.probe({"open", "/dev/null", "r"}));  // the nodes a program needs are there
}

}  // namespace
}  // namespace oishell::test
