#pragma once
// VirtualDisplay: the only screen a sandbox's code can see or drive (`oishell supervise --display WxH`, behind
// `interpreter --os`). An X server of the sandbox's own (Xvfb) is started inside, as a child of the sandbox's init
// like any other process there, so it has every confinement the policy gives: its socket lives on the sandbox's
// tmpfs /tmp and, abstract twin included, in the sandbox's network namespace; nothing on the host can reach it and
// it can reach nothing of the host's (no host display, input device or bus is visible inside: guarantees.md). A
// window manager (matchbox-window-manager, which shows one application at a time, full screen, as a model wants to
// see it) is started when the sandbox has one; without it, windows keep the place they ask for, and `ready` says so.
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "base/unique_fd.h"
#include "policy/sandbox_spec.h"
#include "runtime/outside/sandbox.h"

namespace oishell::executors {

struct DisplaySize {
  int width = 1024;   // XGA: what computer-use models are trained on and see best
  int height = 768;
};

// "1280x800" → {1280, 800}; each side 64..8192. The error says what was wrong.
Result<DisplaySize> parse_display_size(std::string_view text);

class VirtualDisplay {
 public:
  // Starts Xvfb inside `sandbox` and waits (up to 10 s) until it accepts clients, then the window manager.
  // Fails closed: no Xvfb on the sandbox's PATH, or a server that does not come up, is an error naming the cause
  // (the server's own last words included).
  static Result<std::unique_ptr<VirtualDisplay>> start(Sandbox& sandbox, const SandboxSpec& spec, DisplaySize size);
  ~VirtualDisplay();
  VirtualDisplay(const VirtualDisplay&) = delete;
  VirtualDisplay& operator=(const VirtualDisplay&) = delete;

  // ":0": the DISPLAY every executor gets.
  const std::string& name() const { return name_; }
  DisplaySize size() const { return size_; }
  // What every executor's environment gets: DISPLAY, and OISHELL_COMPUTER (the python executor's `computer`).
  std::vector<std::pair<std::string, std::string>> environment() const;
  // For the `ready` event: {"name", "width", "height", "server", "window_manager" (null when none)}.
  nlohmann::json describe() const;

 private:
  VirtualDisplay() = default;
  void drain(std::vector<UniqueFd> fds);  // reads what the server and the window manager print, until they end

  std::string name_;
  DisplaySize size_;
  std::string server_;
  std::string window_manager_;
  UniqueFd stop_;  // eventfd: ends the drain thread
  std::thread drainer_;
};

}  // namespace oishell::executors
