#include "base/json_rpc.h"

#include <unistd.h>

#include <cerrno>

namespace oishell::rpc {

using nlohmann::json;

std::optional<std::string> RpcChannel::read_line(bool* too_long) {
  *too_long = false;
  size_t scanned = 0;
  while (true) {
    const size_t newline = buffer_.find('\n', scanned);
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      if (*too_long) return std::string();
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (buffer_.size() > max_line_bytes_) {  // keep reading to the end of this line, dropping it
      *too_long = true;
      buffer_.clear();
    }
    scanned = buffer_.size();
    if (eof_) {
      if (buffer_.empty() && !*too_long) return std::nullopt;
      return *too_long ? std::string() : std::exchange(buffer_, std::string());
    }
    char chunk[65536];
    const ssize_t n = ::read(in_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::optional<Incoming> RpcChannel::read() {
  while (true) {
    bool too_long = false;
    auto line = read_line(&too_long);
    if (!line) return std::nullopt;
    if (too_long) {
      return Incoming{nullptr, "a message longer than " + std::to_string(max_line_bytes_ >> 20) + " MiB",
                      error::parse_error};
    }
    if (line->find_first_not_of(" \t\r") == std::string::npos) continue;
    json message = json::parse(*line, nullptr, /*allow_exceptions=*/false);
    if (message.is_discarded()) return Incoming{nullptr, "not JSON", error::parse_error};
    if (!message.is_object()) return Incoming{nullptr, "not a JSON-RPC message (an object)", error::invalid_request};
    return Incoming{std::move(message), "", 0};
  }
}

bool RpcChannel::send(const json& message) {
  std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace);
  line += '\n';
  std::lock_guard lock(write_mutex_);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(out_fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void RpcChannel::respond(const json& id, json result) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void RpcChannel::respond_error(const json& id, int code, const std::string& message) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

void RpcChannel::notify(const std::string& method, json params) {
  send({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

std::optional<json> RpcChannel::call(const std::string& method, json params) {
  int64_t id;
  uint64_t abandoned_at;
  {
    std::lock_guard lock(calls_mutex_);
    if (closed_) return std::nullopt;
    id = next_id_++;
    waiting_[id];
    abandoned_at = abandoned_;
  }
  send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  std::unique_lock lock(calls_mutex_);
  answered_.wait(lock, [&] { return waiting_[id].has_value() || closed_ || abandoned_ != abandoned_at; });
  std::optional<json> answer = std::move(waiting_[id]);
  waiting_.erase(id);
  if (!answer || !answer->contains("result")) return std::nullopt;
  return std::move((*answer)["result"]);
}

bool RpcChannel::deliver(const json& response) {
  auto id = response.find("id");
  if (id == response.end() || !id->is_number_integer()) return false;
  std::lock_guard lock(calls_mutex_);
  auto it = waiting_.find(id->get<int64_t>());
  if (it == waiting_.end()) return false;
  it->second = response;
  answered_.notify_all();
  return true;
}

void RpcChannel::abandon() {
  std::lock_guard lock(calls_mutex_);
  ++abandoned_;
  answered_.notify_all();
}

void RpcChannel::close() {
  std::lock_guard lock(calls_mutex_);
  closed_ = true;
  answered_.notify_all();
}

}  // namespace oishell::rpc
