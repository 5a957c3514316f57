#include "tests/executors/supervisor_client.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace oishell::test {

SupervisorClient::SupervisorClient(std::vector<std::string> args) {
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC)) return;
  std::vector<std::string> argv = {oishell_bin(), "supervise"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  in_ = in[1];
  out_ = out[0];
  reader_ = std::thread([this] { read_loop(); });
  ready_ = wait_event("ready", std::chrono::seconds(30));
}

SupervisorClient::~SupervisorClient() {
  if (pid_ > 0) {
    if (in_ >= 0) ::close(in_);
    in_ = -1;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (reader_.joinable()) reader_.join();
  if (out_ >= 0) ::close(out_);
}

void SupervisorClient::read_loop() {
  std::string buffer;
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    std::vector<nlohmann::json> parsed;
    for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      auto event = nlohmann::json::parse(buffer.substr(start, nl - start), nullptr, false);
      if (event.is_discarded()) event = {{"event", "unparsable"}, {"line", buffer.substr(start, nl - start)}};
      parsed.push_back(std::move(event));
    }
    buffer.erase(0, start);
    std::lock_guard lock(mutex_);
    for (auto& e : parsed) events_.push_back(std::move(e));
    changed_.notify_all();
  }
  std::lock_guard lock(mutex_);
  eof_ = true;
  changed_.notify_all();
}

void SupervisorClient::send_raw(const std::string& line) {
  std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(in_, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

void SupervisorClient::send(const nlohmann::json& request) { send_raw(request.dump()); }

nlohmann::json SupervisorClient::wait_for(const std::function<bool(const nlohmann::json&)>& pred,
                                          std::chrono::milliseconds timeout, size_t from) {
  std::unique_lock lock(mutex_);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    for (size_t i = from; i < events_.size(); ++i) {
      if (pred(events_[i])) return events_[i];
    }
    from = events_.size();
    if (eof_) return nullptr;
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      for (size_t i = from; i < events_.size(); ++i) {
        if (pred(events_[i])) return events_[i];
      }
      return nullptr;
    }
  }
}

nlohmann::json SupervisorClient::wait_event(const std::string& name, std::chrono::milliseconds timeout) {
  return wait_for([&](const nlohmann::json& e) { return e.value("event", "") == name; }, timeout);
}

std::string SupervisorClient::next_id() { return "b" + std::to_string(++next_); }

std::vector<nlohmann::json> SupervisorClient::events() {
  std::lock_guard lock(mutex_);
  return events_;
}

BlockResult SupervisorClient::collect(const std::string& id, std::chrono::milliseconds timeout) {
  BlockResult result;
  result.done = wait_for(
      [&](const nlohmann::json& e) { return e.value("event", "") == "done" && e.value("id", "") == id; }, timeout);
  for (const auto& e : events()) {
    if (!e.contains("id") || !e["id"].is_string() || e["id"] != id) continue;
    result.events.push_back(e);
    if (e.value("event", "") == "output") {
      (e.value("stream", "") == "stdout" ? result.out : result.err) += e.value("data", "");
    }
  }
  return result;
}

BlockResult SupervisorClient::run(const std::string& language, const std::string& code,
                                  std::chrono::milliseconds timeout) {
  const std::string id = next_id();
  send({{"op", "exec"}, {"id", id}, {"language", language}, {"code", code}});
  return collect(id, timeout);
}

int SupervisorClient::finish(std::chrono::milliseconds timeout) {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    ::usleep(10000);
  }
  return -1;
}

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/oishell-exec-test.XXXXXX";
  if (::mkdtemp(templ.data())) path_ = templ;
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::string cmd = "rm -rf '" + path_ + "'";
  int rc = std::system(cmd.c_str());
  (void)rc;
}

}  // namespace oishell::test
