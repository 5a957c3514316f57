#include "runtime/inside/pty.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/wire.h"

namespace oishell {

std::string encode_terminal_request(const TerminalRequest& request) {
  wire::Writer w;
  uint8_t mask = 0;
  for (int i = 0; i < 3; ++i) mask |= request.stdio[i] ? (1u << i) : 0;
  w.u8(mask);
  w.u16(request.size.ws_row);
  w.u16(request.size.ws_col);
  w.u16(request.size.ws_xpixel);
  w.u16(request.size.ws_ypixel);
  w.boolean(request.modes.has_value());
  if (request.modes) w.bytes(std::string_view(reinterpret_cast<const char*>(&*request.modes), sizeof(termios)));
  return w.take();
}

Result<TerminalRequest> decode_terminal_request(std::string_view data) {
  wire::Reader r(data);
  TerminalRequest request;
  uint8_t mask = 0;
  bool has_modes = false;
  if (!r.u8(&mask) || mask > 7 || !r.u16(&request.size.ws_row) || !r.u16(&request.size.ws_col) ||
      !r.u16(&request.size.ws_xpixel) || !r.u16(&request.size.ws_ypixel) || !r.boolean(&has_modes)) {
    return Status::error("terminal request: malformed");
  }
  for (int i = 0; i < 3; ++i) request.stdio[i] = (mask >> i) & 1;
  if (has_modes) {
    std::string bytes;
    if (!r.bytes(&bytes) || bytes.size() != sizeof(termios)) return Status::error("terminal request: malformed modes");
    termios modes;
    std::memcpy(&modes, bytes.data(), sizeof modes);
    request.modes = modes;
  }
  if (!r.done()) return Status::error("terminal request: trailing bytes");
  return request;
}

Result<Pty> open_sandbox_pty(const TerminalRequest& request) {
  Pty pty;
  pty.master.reset(::open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!pty.master) return Status::from_errno(errno, "open(\"/dev/ptmx\")");
  int unlock = 0;
  if (::ioctl(pty.master.get(), TIOCSPTLCK, &unlock) != 0) return Status::from_errno(errno, "ioctl(TIOCSPTLCK)");
  unsigned number = 0;
  if (::ioctl(pty.master.get(), TIOCGPTN, &number) != 0) return Status::from_errno(errno, "ioctl(TIOCGPTN)");
  pty.slave_path = "/dev/pts/" + std::to_string(number);
  if (request.size.ws_row || request.size.ws_col) {
    if (::ioctl(pty.master.get(), TIOCSWINSZ, &request.size) != 0) return Status::from_errno(errno, "ioctl(TIOCSWINSZ)");
  }
  if (request.modes) {
    // The user's modes (erase and interrupt characters, IUTF8, ...) on the new terminal, through its slave.
    UniqueFd slave(::ioctl(pty.master.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!slave) return Status::from_errno(errno, "ioctl(TIOCGPTPEER)");
    if (::tcsetattr(slave.get(), TCSANOW, &*request.modes) != 0) return Status::from_errno(errno, "tcsetattr");
  }
  return pty;
}

}  // namespace oishell
