#pragma once
// Executor: one persistent language process inside the sandbox, driven by its driver over a control socket
// (docs/protocol.md, "Executor control channel"). Runs one block at a time; queues the rest. Streams the block's
// stdout and stderr as output events, reports active lines, images and the end of the block (`done`), interrupts
// (SIGINT to its process group, SIGKILL after a grace period), enforces the per-block wall time (counted from the
// driver's `R`) and the language's start timeout, and restarts the process after a crash, a kill or a reset, saying
// what was lost.
//
// Single-threaded: every method is called from the session's poll loop. Precondition: SIGPIPE is ignored in the
// process (a pipe control channel, ControlChannel::pipes, is written with write(2), which has no MSG_NOSIGNAL).
#include <poll.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/outside/events.h"
#include "runtime/executors/language.h"
#include "runtime/executors/poll_client.h"
#include "runtime/executors/protocol.h"
#include "runtime/executors/denial_explainer.h"
#include "runtime/outside/sandbox.h"

namespace oishell::executors {

struct ExecutorOptions {
  std::optional<std::chrono::milliseconds> wall_time;               // per block; none = unlimited
  std::chrono::milliseconds interrupt_grace{2000};                  // SIGINT, then SIGKILL after this
  size_t read_chunk = 64 * 1024;                                     // the largest output event's data
  std::vector<std::pair<std::string, std::string>> extra_env;       // e.g. the virtual display's DISPLAY
  // Says which of a block's failures on a path the sandbox caused (fs.denied events before its `done`); none
  // without a sandbox (--sandbox none). Not owned: outlives the executors.
  DenialExplainer* denials = nullptr;
};

// The shorter of the session's wall time and a request's `timeout_ms` (either may be absent).
std::optional<std::chrono::milliseconds> shorter_wall_time(std::optional<std::chrono::milliseconds> session,
                                                           std::optional<uint64_t> request_ms);

class Executor final : public PollClient {
 public:
  // `program` is the program's path inside the sandbox; `driver` the driver's path inside.
  Executor(const Language& language, std::string program, std::string driver, Sandbox& sandbox, EventSink& events,
           ExecutorOptions options);
  ~Executor() override;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const Language& language() const { return language_; }
  bool has_block(const std::string& id) const;
  // No block running or queued.
  bool idle() const { return !block_ && queue_.empty(); }

  // Queues a block; starts the process first when it is not running.
  void submit(ExecRequest request);
  // Interrupts a running block (SIGINT) or drops a queued one (done: interrupted). False: unknown id.
  bool interrupt(const std::string& id);
  // Kills the process (and ends a running block as interrupted); it restarts at once.
  void reset();
  // Kills the process for good: running and queued blocks end as `killed`.
  void shutdown();

  // PollClient.
  void add_pollfds(std::vector<pollfd>& fds) const override;
  bool owns_fd(int fd) const override;
  void on_fd(int fd, short revents) override;
  std::optional<Clock::time_point> next_deadline() const override;
  void on_time(Clock::time_point now) override;
  bool on_exit(const ExitInfo& exit) override;

 private:
  enum class Stop { none, interrupt, timeout, reset, shutdown };
  struct Block {
    ExecRequest request;
    uint64_t seq = 0;
    Clock::time_point started;
    std::optional<Clock::time_point> deadline;
    Stop stop = Stop::none;
    std::optional<Clock::time_point> kill_at;  // after SIGINT: when to give up and SIGKILL
    int last_line = 0;
    std::string output_tail;  // its last kOutputTail bytes of stdout and stderr, for the denial explainer
  };
  static constexpr size_t kOutputTail = 64 * 1024;

  Status start();
  void start_next();
  // The block's wall time: the session's, shortened by the request's `timeout_ms`.
  std::optional<std::chrono::milliseconds> wall_time_of(const ExecRequest& request) const;
  void send_block(Block& block);
  void stop_block(Stop why);
  void read_stream(int fd, const char* stream, Utf8Carry& carry, bool drain);
  void drain_streams();
  void read_control(size_t budget);
  void take_control_bytes(std::string_view bytes);
  void append_control(std::string_view part);
  // `owner`, when not null, holds `line` and may be taken (an image's data is moved into its event).
  void handle_control_line(std::string_view line, std::string* owner);
  void report_dropped_line(bool oversized, std::string_view why);
  void finish(const std::string& status, int exit_code, const std::string& reason);
  void flush_control();
  int request_fd() const { return control_requests_ ? control_requests_.get() : control_.get(); }
  void on_ready();
  void close_process();
  void emit_output(const char* stream, std::string data);

  const Language& language_;
  std::string program_;
  std::string driver_;
  Sandbox& sandbox_;
  EventSink& events_;
  ExecutorOptions options_;

  bool alive_ = false;
  bool ever_started_ = false;
  bool ready_ = false;
  bool dying_ = false;  // reset() killed the process; its exit has not been seen yet
  uint64_t process_id_ = 0;
  UniqueFd stdout_;
  UniqueFd stderr_;
  UniqueFd control_;           // what the driver reports; with ControlChannel::socket, requests go there too
  UniqueFd control_requests_;  // ControlChannel::pipes: the requests' pipe
  // Until the driver said `R`: when it is given up (Language::start_timeout), and whether it was.
  std::optional<Clock::time_point> start_deadline_;
  bool start_timed_out_ = false;
  // The control line being received: at most kMaxControlLine bytes. While `control_skipping_`, the rest of a line
  // that grew over the bound is thrown away up to its '\n'.
  std::string control_in_;
  bool control_skipping_ = false;
  // Lines dropped since this process started (oversized, malformed); the first of each kind is reported.
  uint64_t control_oversized_ = 0;
  uint64_t control_malformed_ = 0;
  std::string control_out_;
  Utf8Carry stdout_carry_;
  Utf8Carry stderr_carry_;
  std::optional<Block> block_;
  std::deque<ExecRequest> queue_;
  std::string last_id_;  // output after a block ended (background jobs) is attributed to it
  uint64_t seq_ = 0;
  std::string restart_reason_;  // set when the process ended; reported by executor_restarted
  bool shut_down_ = false;
};

}  // namespace oishell::executors
