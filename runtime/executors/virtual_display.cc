#include "runtime/executors/virtual_display.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>

#include "runtime/executors/language.h"

namespace oishell::executors {
namespace {

constexpr std::chrono::milliseconds kStartTimeout{10'000};
constexpr size_t kLastWordsBytes = 2048;  // what is kept of the server's output for an error message

Result<int> parse_side(std::string_view text, const char* which) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || text[0] == '0') {
    return Status::error(std::string("the display's ") + which + " is not a number");
  }
  if (value < 64 || value > 8192) return Status::error(std::string("the display's ") + which + " must be 64..8192");
  return value;
}

// The text a process printed, made safe to put in one line of an error message.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// Appends what is readable on `fd` to `out` (keeping its last kLastWordsBytes); false at EOF or error.
bool read_some(int fd, std::string* out) {
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  out->append(buf, static_cast<size_t>(n));
  if (out->size() > kLastWordsBytes) out->erase(0, out->size() - kLastWordsBytes);
  return true;
}

}  // namespace

Result<DisplaySize> parse_display_size(std::string_view text) {
  size_t x = text.find('x');
  if (x == std::string_view::npos) return Status::error("a display size is WIDTHxHEIGHT, e.g. 1024x768");
  auto width = parse_side(text.substr(0, x), "width");
  if (!width) return width.status();
  auto height = parse_side(text.substr(x + 1), "height");
  if (!height) return height.status();
  return DisplaySize{*width, *height};
}

Result<std::unique_ptr<VirtualDisplay>> VirtualDisplay::start(Sandbox& sandbox, const SandboxSpec& spec,
                                                              DisplaySize size) {
  std::unique_ptr<VirtualDisplay> display(new VirtualDisplay());
  display->size_ = size;
  display->server_ = find_program("Xvfb", spec, /*confined=*/true);
  if (display->server_.empty()) {
    return Status::error("--display: there is no Xvfb in the sandbox (install the xvfb package, or give its path)");
  }
  // -displayfd: the server writes its display number there once it accepts clients (and picks a free one).
  int ready_pipe[2];
  if (::pipe2(ready_pipe, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe2");
  UniqueFd ready_read(ready_pipe[0]), ready_write(ready_pipe[1]);
  SpawnRequest server;
  server.argv = {display->server_, "-displayfd", "3", "-screen", "0",
                 std::to_string(size.width) + "x" + std::to_string(size.height) + "x24",
                 "-nolisten", "tcp", "-noreset", "-nocursor"};
  server.stdio = SpawnRequest::Stdio::pipes;
  server.extra_fds = {ready_write.get()};
  auto spawned = sandbox.spawn(server);
  if (!spawned) return spawned.status().with_context("--display: starting Xvfb");
  ready_write.reset();
  spawned->stdin_fd.reset();

  std::string number, last_words;
  bool ready_open = true, err_open = true;
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (number.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Status::error("--display: Xvfb did not accept clients within 10 s: " + one_line(last_words));
    }
    if (!ready_open) {
      return Status::error("--display: Xvfb ended before it accepted clients: " + one_line(last_words));
    }
    pollfd fds[2] = {{ready_read.get(), POLLIN, 0}, {err_open ? spawned->stderr_fd.get() : -1, POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) return Status::from_errno(errno, "poll");
    if (fds[1].revents) err_open = read_some(fds[1].fd, &last_words);
    if (fds[0].revents) ready_open = read_some(fds[0].fd, &number);
  }
  number.erase(number.find('\n'));
  int display_number = -1;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), display_number);
  if (ec != std::errc() || end != number.data() + number.size() || display_number < 0) {
    return Status::error("--display: Xvfb reported no display number");
  }
  display->name_ = ":" + std::to_string(display_number);

  std::vector<UniqueFd> outputs;
  outputs.push_back(std::move(spawned->stdout_fd));
  outputs.push_back(std::move(spawned->stderr_fd));
  // The window manager is a convenience: without one the display still works (windows where they ask to be).
  if (std::string wm = find_program("matchbox-window-manager", spec, true); !wm.empty()) {
    SpawnRequest manager;
    manager.argv = {wm, "-use_titlebar", "no", "-use_cursor", "no"};
    manager.extra_env = {{"DISPLAY", display->name_}};
    manager.stdio = SpawnRequest::Stdio::pipes;
    if (auto started = sandbox.spawn(manager)) {
      started->stdin_fd.reset();
      outputs.push_back(std::move(started->stdout_fd));
      outputs.push_back(std::move(started->stderr_fd));
      display->window_manager_ = wm;
    }
  }
  display->stop_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!display->stop_) return Status::from_errno(errno, "eventfd");
  display->drainer_ = std::thread([d = display.get(), fds = std::move(outputs)]() mutable { d->drain(std::move(fds)); });
  return display;
}

void VirtualDisplay::drain(std::vector<UniqueFd> fds) {
  std::string discard;
  while (true) {
    std::vector<pollfd> watch = {{stop_.get(), POLLIN, 0}};
    for (const auto& fd : fds) {
      if (fd) watch.push_back({fd.get(), POLLIN, 0});
    }
    if (watch.size() == 1) return;  // every process ended
    if (::poll(watch.data(), watch.size(), -1) < 0 && errno != EINTR) return;
    if (watch[0].revents) return;
    for (size_t i = 1; i < watch.size(); ++i) {
      if (!watch[i].revents) continue;
      discard.clear();
      if (!read_some(watch[i].fd, &discard)) {
        for (auto& fd : fds) {
          if (fd.get() == watch[i].fd) fd.reset();
        }
      }
    }
  }
}

VirtualDisplay::~VirtualDisplay() {
  if (drainer_.joinable()) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_.get(), &one, sizeof one);
    drainer_.join();
  }
}

std::vector<std::pair<std::string, std::string>> VirtualDisplay::environment() const {
  return {{"DISPLAY", name_}, {"OISHELL_COMPUTER", std::to_string(size_.width) + "x" + std::to_string(size_.height)}};
}

nlohmann::json VirtualDisplay::describe() const {
  return {{"name", name_},
          {"width", size_.width},
          {"height", size_.height},
          {"server", server_},
          {"window_manager", window_manager_.empty() ? nlohmann::json(nullptr) : nlohmann::json(window_manager_)}};
}

}  // namespace oishell::executors
