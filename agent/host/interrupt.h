#pragma once
// Ctrl-C for the agent: SIGINT increments a counter and makes a self-pipe readable, so that every wait (the LLM
// stream, a running block, a confirmation) can poll it. The first Ctrl-C stops what runs; the loop decides what a
// second one means (back to the prompt).
namespace oishell::agent::interrupt {

// Installs the SIGINT handler (idempotent). Before install(), count() stays 0 and wake_fd() is -1.
void install();
// Readable while SIGINTs are pending; drain() empties it.
int wake_fd();
// SIGINTs received since install().
unsigned count();
void drain();
// Counts as a Ctrl-C without a signal (what runs stops): the server's client went away or asked to stop.
void request();

// Waits until `fd` is readable (or `other`, -1: none), or a Ctrl-C came after `seen` (count() when the caller's
// read began). A plain blocking read loses a Ctrl-C that lands just before it (the handler runs, the read then
// blocks); the wait sees the self-pipe instead. Other signals do not end the wait.
enum class Ready { fd, other, interrupted, error };
Ready wait_readable(int fd, int other, unsigned seen);

}  // namespace oishell::agent::interrupt
