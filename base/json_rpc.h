#pragma once
// JSON-RPC 2.0 over a pair of file descriptors, one JSON message per line: how the Agent Client Protocol
// (`interpreter --acp`, agent/acp/) and the Model Context Protocol's stdio transport (`oishell mcp`, runtime/mcp/)
// carry it. One thread reads (read()); any thread writes whole lines (send() is locked); a
// thread may call the other side and wait for its answer (call()), which the reading thread hands over (deliver()).
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace oishell::rpc {

// JSON-RPC's error codes.
namespace error {
constexpr int parse_error = -32700;
constexpr int invalid_request = -32600;
constexpr int method_not_found = -32601;
constexpr int invalid_params = -32602;
constexpr int internal_error = -32603;
}  // namespace error

struct Incoming {
  nlohmann::json message;  // an object: a request, a notification or a response
  std::string error;       // or why the line is not one (then message is null)
  int code = 0;            // with error: parse_error (not JSON, too long) or invalid_request (JSON, not an object)
};

class RpcChannel {
 public:
  static constexpr size_t kMaxLineBytes = 32 * 1024 * 1024;
  RpcChannel(int in_fd, int out_fd, size_t max_line_bytes = kMaxLineBytes)
      : in_fd_(in_fd), out_fd_(out_fd), max_line_bytes_(max_line_bytes) {}

  // The next message; nullopt at the end of the input. Blank lines are skipped.
  std::optional<Incoming> read();
  // Writes one message as one line. False once the other side is gone.
  bool send(const nlohmann::json& message);
  void respond(const nlohmann::json& id, nlohmann::json result);
  void respond_error(const nlohmann::json& id, int code, const std::string& message);
  void notify(const std::string& method, nlohmann::json params);

  // Calls a method of the other side and waits for the answer: its result, or nullopt when it answered with an
  // error, the input ended, or `abandon()` was called meanwhile (a cancelled turn).
  std::optional<nlohmann::json> call(const std::string& method, nlohmann::json params);
  // A response read by the reading thread: true when it answered one of our calls.
  bool deliver(const nlohmann::json& response);
  // Every call waiting now returns nullopt (the input ended, or the turn was cancelled).
  void abandon();
  // The input ended: every call now and later returns nullopt.
  void close();

 private:
  // The next line (without its newline); nullopt at the end of the input. A line over max_line_bytes_ is skipped
  // whole and reported as "" with *too_long set.
  std::optional<std::string> read_line(bool* too_long);

  int in_fd_;
  int out_fd_;
  size_t max_line_bytes_;
  std::string buffer_;
  bool eof_ = false;
  std::mutex write_mutex_;
  std::mutex calls_mutex_;
  std::condition_variable answered_;
  int64_t next_id_ = 1;
  std::map<int64_t, std::optional<nlohmann::json>> waiting_;  // our calls: nullopt until answered
  uint64_t abandoned_ = 0;  // abandon() calls so far
  bool closed_ = false;
};

}  // namespace oishell::rpc
