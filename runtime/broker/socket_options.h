#pragma once
// The options a program sets on its socket before connect(2) that must survive the broker replacing that socket
// with one of its own: keep-alive and its timers, Nagle, linger, timeouts, priority and traffic class.
namespace oishell::broker {

// Copies what `from` has set onto `to` (same family and type). Best effort per option: an option the kernel
// refuses is left at its default.
void copy_socket_options(int from, int to, int family);

}  // namespace oishell::broker
