#pragma once
// What the model is told about a block it ran: the last `max_output` characters of its output (marked when cut),
// the exit status, and what the sandbox did (denials, limits, restarts, refused network asks, Ctrl-C) or found the
// run had left for the host (protected paths changed, git repositories neutralised).
#include <string>

#include "agent/sandbox/executor.h"

namespace oishell::agent {

// Collects a block's output (stdout and stderr as they interleaved), keeping a bounded tail.
class OutputTail {
 public:
  explicit OutputTail(size_t keep) : keep_(keep) {}
  void add(std::string_view data);
  const std::string& tail() const { return tail_; }
  size_t total() const { return total_; }

 private:
  size_t keep_;
  std::string tail_;
  size_t total_ = 0;
};

std::string format_feedback(const OutputTail& output, const ExecResult& result, size_t max_output);

// One line about a denied/limit/restart event, for the user and the model. Every value from the event is escaped
// (escape_for_terminal): no control character, no line break.
std::string describe_event(const nlohmann::json& event);

// One line about a host change, for the user and the model, escaped like describe_event:
// "protected path changed during the run: /w/.envrc (created)",
// "git repository neutralised: /w/sub/.git/config: written during the run; sets core.fsmonitor; rewritten ...".
std::string describe_host_change(const HostChange& change);
// What the model is asked to do after host changes (tell the user, do not try again).
extern const char* const kHostChangeAdvice;

}  // namespace oishell::agent
