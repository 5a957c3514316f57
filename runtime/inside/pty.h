#pragma once
// A pseudo-terminal of the sandbox's own, for a process started on a terminal (`oishell run` on a terminal): the
// supervisor asks for it in the spawn request, init opens it in the sandbox's devpts (so the process's tty is
// /dev/pts/N inside, and ttyname(3) works), gives the slave to the process as its controlling terminal, and hands
// the master to the supervisor, which relays it to the user's terminal (runtime/outside/terminal_relay.h). The host's
// terminal never enters the sandbox: nothing inside can set it raw, load a line discipline on it, read what the
// user types into another program, or type into it.
#include <sys/ioctl.h>
#include <termios.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell {

struct TerminalRequest {
  bool stdio[3] = {false, false, false};  // which of the process's fds 0..2 are the terminal (the others as passed)
  winsize size{};                         // the user's terminal's size
  std::optional<termios> modes;           // its modes when it is the input (erase character, iutf8, ...)
};

// The spawn message's `data` (both ends are this binary).
std::string encode_terminal_request(const TerminalRequest& request);
Result<TerminalRequest> decode_terminal_request(std::string_view data);

struct Pty {
  UniqueFd master;
  std::string slave_path;  // "/dev/pts/N", inside
};

// Inside (init): opens /dev/ptmx, unlocks it, sets the size and the modes. Precondition: /dev/pts is the sandbox's
// own devpts (runtime/inside/mount_dev.cc).
Result<Pty> open_sandbox_pty(const TerminalRequest& request);

}  // namespace oishell
