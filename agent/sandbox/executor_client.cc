// SupervisorClient (executor_client.h) speaking the supervisor's JSON-lines protocol: waiting for `ready`, running a
// block (exec) and passing its events on, the reports kept for the next block, and the supervisor's end (its death
// told with its stderr). Starting it is supervisor_launch.cc's; the policy's summary and its live changes are
// supervisor_policy.cc's.
#include "agent/sandbox/executor_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "agent/host/atomic_file.h"
#include "agent/host/interrupt.h"
#include "agent/core/json_util.h"
#include "agent/sandbox/policy_describe.h"
#include "agent/host/subprocess.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

constexpr size_t kMaxStderr = 16 * 1024;

// The supervisor's complaint about a policy the agent wrote for it (a profile's `policy:` mapping, in a private file
// removed when the session ends): the file named by its base name, and its text with line numbers after the
// complaint, so that the line and column it names can be found. `err` unchanged when it does not name the file.
std::string with_private_policy_shown(std::string err, const std::string& path, const std::string& label) {
  if (path.empty() || err.find(path) == std::string::npos) return err;
  const std::string name = path.substr(path.rfind('/') + 1);
  for (size_t at = err.find(path); at != std::string::npos; at = err.find(path, at + name.size())) {
    err.replace(at, path.size(), name);
  }
  auto text = read_file(path, 64 * 1024);
  if (!text) return err;
  err += "\n" + name + ", " + label + " as given to the sandbox:";
  size_t line = 1;
  for (size_t start = 0; start < text->size(); ++line) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    std::string number = std::to_string(line);
    err += "\n" + std::string(number.size() < 4 ? 4 - number.size() : 0, ' ') + number + "  " +
           text->substr(start, end - start);
    start = end + 1;
  }
  return err;
}

}  // namespace

std::string_view ask_decision_name(AskDecision d) {
  switch (d) {
    case AskDecision::allow_once: return "allow_once";
    case AskDecision::allow_always: return "allow_always";
    case AskDecision::deny: return "deny";
  }
  return "deny";
}

void SupervisorClient::prestart() {
  if (pid_ < 0 && !ready_) spawn_error_ = spawn();
}

Status SupervisorClient::start() {
  if (ready_) return Status::ok();
  if (!spawn_error_.is_ok()) return std::exchange(spawn_error_, Status::ok());
  if (pid_ < 0) OI_TRY(spawn());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.ready_timeout_ms);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      shutdown();
      return Status::error("the sandbox supervisor did not become ready within " +
                           std::to_string(options_.ready_timeout_ms / 1000) + " s");
    }
    auto ev = next_event(static_cast<int>(left.count()));
    if (!ev) return ev.status();
    if (ev->is_null()) continue;
    std::string name = ev->value("event", "");
    if (name == "ready") {
      ready_ = true;
      ready_event_ = *ev;
      languages_.clear();
      if (auto it = ev->find("languages"); it != ev->end() && it->is_array()) {
        for (const auto& l : *it) {
          if (l.is_string()) languages_.push_back(l.get<std::string>());
          else if (l.is_object() && l.contains("name") && l["name"].is_string()) {
            languages_.push_back(l["name"].get<std::string>());
          }
        }
      }
      if (languages_.empty()) languages_ = {"python", "shell"};
      policy_summary_ = load_policy_summary();
      if (Status s = replay_live_changes(); !s.is_ok()) {
        shutdown();
        return s;
      }
      return Status::ok();
    }
    if (name == "error") return Status::error("the sandbox supervisor: " + ev->value("message", dump_json(*ev)));
  }
}

Status SupervisorClient::send(const json& request) {
  if (Status s = write_to_child(to_child_.get(), dump_json(request) + "\n"); !s.is_ok()) {
    return died("sending a request").with_context(s.message());
  }
  return Status::ok();
}

void SupervisorClient::drain_stderr() {
  if (!err_child_) return;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(err_child_.get(), buf, sizeof buf);
    if (n <= 0) {
      if (n == 0) err_child_.reset();
      return;
    }
    err_buf_.append(buf, static_cast<size_t>(n));
    if (err_buf_.size() > kMaxStderr) err_buf_.erase(0, err_buf_.size() - kMaxStderr);
  }
}

Status SupervisorClient::died(const std::string& while_doing) {
  drain_stderr();
  int status = 0;
  std::string how = "exited";
  if (pid_ > 0) {
    // Give it a moment to finish exiting, then collect it.
    for (int i = 0; i < 50; ++i) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                : "was killed by signal " + std::to_string(WTERMSIG(status));
        pid_ = -1;
        break;
      }
      ::usleep(10000);
    }
  }
  ready_ = false;
  to_child_.reset();
  from_child_.reset();
  std::string msg = "the sandbox supervisor " + how + " while " + while_doing;
  std::string err = err_buf_;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  if (!options_.policy_label.empty()) err = with_private_policy_shown(err, options_.policy, options_.policy_label);
  if (!err.empty()) msg += ":\n" + err;
  err_buf_.clear();
  return Status::error(msg);
}

std::optional<json> SupervisorClient::take_line() {
  while (true) {
    auto nl = in_buf_.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    std::string line = in_buf_.substr(0, nl);
    in_buf_.erase(0, nl + 1);
    if (line.empty()) continue;
    json ev = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!ev.is_object()) return json::object({{"event", "error"}, {"message", "unreadable event: " + line}});
    return ev;
  }
}

bool SupervisorClient::read_some(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (from_child_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    int wait = static_cast<int>(std::max<int64_t>(0, left.count()));
    pollfd fds[2] = {{from_child_.get(), POLLIN, 0}, {err_child_.get(), POLLIN, 0}};
    int r = ::poll(fds, 2, wait);
    if (r < 0 && errno == EINTR && wait > 0) continue;
    if (r <= 0) return false;
    if (fds[1].revents & (POLLIN | POLLHUP)) drain_stderr();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      ssize_t n = ::read(from_child_.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      in_buf_.append(buf, static_cast<size_t>(n));
      return true;
    }
    if (wait == 0) return false;  // only stderr had something
  }
  return false;
}

Result<json> SupervisorClient::next_event(int timeout_ms, int interrupt_fd, bool* woken) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  while (true) {
    if (auto ev = take_line()) return *ev;
    if (!from_child_) return died("running");
    int wait = -1;
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return json();
      wait = static_cast<int>(left.count());
    }
    pollfd fds[3] = {{from_child_.get(), POLLIN, 0}, {err_child_.get(), POLLIN, 0}, {interrupt_fd, POLLIN, 0}};
    int r = ::poll(fds, 3, wait);
    if (r < 0) {
      if (errno == EINTR) {
        if (woken) *woken = true;
        return json();
      }
      return Status::from_errno(errno, "poll(supervisor)");
    }
    if (fds[2].revents & POLLIN) {
      if (woken) *woken = true;
      return json();
    }
    if (fds[1].revents & (POLLIN | POLLHUP)) drain_stderr();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      ssize_t n = ::read(from_child_.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return died("running");
      in_buf_.append(buf, static_cast<size_t>(n));
    }
  }
}

Result<SupervisorClient::Effect> SupervisorClient::handle_event(const json& e, const std::string& block_id,
                                                                ExecObserver& observer, ExecResult* result) {
  try {
    std::string name = e.value("event", "");
    bool ours = !e.contains("id") || !e["id"].is_string() || e["id"].get<std::string>() == block_id;
    auto host_change = [&](HostChange change) {
      if (change.kind == HostChange::Kind::protected_path && !protected_seen_.insert(change.path).second) return;
      result->host_changes.push_back(change);
      observer.on_host_change(change);
    };
    if (name == "output" && ours) {
      observer.on_output(e.value("stream", "stdout"), e.value("data", ""));
    } else if (name == "active_line" && ours) {
      if (e.contains("line") && e["line"].is_number_integer()) observer.on_active_line(e["line"].get<int>());
    } else if (name == "image" && ours) {
      observer.on_image(e.value("format", "png"), e.value("data", ""));
    } else if (name == "done" && ours) {
      result->status = e.value("status", "ok");
      if (e.contains("exit_code") && e["exit_code"].is_number_integer()) result->exit_code = e["exit_code"].get<int>();
      if (e.contains("duration_ms") && e["duration_ms"].is_number()) {
        result->duration_ms = e["duration_ms"].get<int64_t>();
      }
      return Effect::block_done;
    } else if (name == "ask") {  // (net.ask is the audit copy of the same question)
      json ask_id = e.contains("ask_id") ? e["ask_id"] : e.value("id", json());
      AskDecision d = observer.on_ask(e);
      if (d == AskDecision::deny) result->asks_denied.push_back(e);
      if (to_child_) OI_TRY(send({{"op", "answer"}, {"ask_id", ask_id}, {"decision", ask_decision_name(d)}}));
    } else if (name == "denied" || name == "net.denied" || name.ends_with(".denied")) {
      result->denials.push_back(e);
      observer.on_notice(e);
    } else if (name == "limit") {
      result->limits.push_back(e);
      observer.on_notice(e);
    } else if (name == "executor_restarted" || name == "executor_exited") {
      result->restarts.push_back(e);
      observer.on_notice(e);
    } else if (name == "exit" || name == "protected_changed") {
      // An exit lists every change since the sandbox started; the standalone event only those not yet listed.
      auto it = e.find(name == "exit" ? "protected_changed" : "paths");
      if (it != e.end() && it->is_array()) {
        for (const auto& item : *it) {
          if (item.is_string()) host_change({HostChange::Kind::protected_path, item.get<std::string>(), "", ""});
        }
      }
    } else if (name == "repo_neutralised") {
      host_change({HostChange::Kind::repository, e.value("path", ""), e.value("found", ""), e.value("action", "")});
    } else if (name == "error" && ours && e.contains("id")) {
      return Effect::block_refused;
    }
  } catch (const json::exception& ex) {  // a field of an unexpected type: say so, keep the session
    observer.on_notice({{"event", "protocol_error"}, {"message", std::string(ex.what())}, {"line", dump_json(e)}});
  }
  return Effect::none;
}

void SupervisorClient::drain_after_done(const std::string& block_id, ExecObserver& observer, ExecResult* result) {
  constexpr auto kBudget = std::chrono::milliseconds(20);
  auto until = std::chrono::steady_clock::now() + kBudget;
  while (std::chrono::steady_clock::now() < until) {
    auto ev = take_line();
    if (!ev) {
      if (!read_some(0)) return;
      continue;
    }
    if (!handle_event(*ev, block_id, observer, result)) return;  // the supervisor went away: the next wait says so
  }
}

void SupervisorClient::keep_for_next_block(ExecResult&& reports) {
  auto move_all = [](auto& from, auto& to) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
    from.clear();
  };
  for (auto& c : reports.host_changes) c.between_blocks = true;
  move_all(reports.denials, pending_.denials);
  move_all(reports.limits, pending_.limits);
  move_all(reports.restarts, pending_.restarts);
  move_all(reports.asks_denied, pending_.asks_denied);
  move_all(reports.host_changes, pending_.host_changes);
}

Result<ExecResult> SupervisorClient::exec(const std::string& language, const std::string& code,
                                          ExecObserver& observer) {
  OI_TRY(start());
  std::string id = std::to_string(next_id_++);
  ExecResult result;
  // What was reported since the last block (already shown) goes to the model with this one.
  std::swap(result.denials, pending_.denials);
  std::swap(result.limits, pending_.limits);
  std::swap(result.restarts, pending_.restarts);
  std::swap(result.asks_denied, pending_.asks_denied);
  std::swap(result.host_changes, pending_.host_changes);
  // A block that cannot be run or finished hands what it collected to the next one.
  auto fail = [&](Status status) {
    keep_for_next_block(std::move(result));
    return status;
  };
  const json request = {{"op", "exec"}, {"id", id}, {"language", language}, {"code", code}};
  if (Status sent = send(request); !sent.is_ok()) {
    // The supervisor was gone before the block reached it (it died since the last one): the block never ran, so
    // a new sandbox runs it, given this session's policy changes first; the block's result says what was lost.
    if (ready_) return fail(std::move(sent));
    json restarted = {{"event", "executor_restarted"}, {"language", language},
                      {"reason", "the sandbox had ended (" + sent.message() + "); a new one was started"}};
    if (Status started = start(); !started.is_ok()) return fail(std::move(started));
    result.restarts.push_back(restarted);
    observer.on_notice(restarted);
    if (Status again = send(request); !again.is_ok()) return fail(std::move(again));
  }
  unsigned seen = interrupt::count();
  while (true) {
    bool woken = false;
    auto ev = next_event(-1, interrupt::wake_fd(), &woken);
    if (!ev) return fail(ev.status());
    if (woken || interrupt::count() != seen) {
      interrupt::drain();
      unsigned now = interrupt::count();
      if (now != seen) {
        result.user_interrupts += now - seen;
        seen = now;
        if (Status sent = send({{"op", "interrupt"}, {"id", id}}); !sent.is_ok()) return fail(std::move(sent));
      }
    }
    if (ev->is_null()) continue;
    auto effect = handle_event(*ev, id, observer, &result);
    if (!effect) return fail(effect.status());
    if (*effect == Effect::block_done) {
      drain_after_done(id, observer, &result);
      return result;
    }
    if (*effect == Effect::block_refused) {
      return fail(Status::error("the sandbox refused the block: " + ev->value("message", dump_json(*ev))));
    }
  }
}

void SupervisorClient::poll(ExecObserver& observer) {
  if (!ready_ || !from_child_) return;  // before `ready`, start() reads the events
  ExecResult reports;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (std::chrono::steady_clock::now() < until) {
    auto ev = take_line();
    if (!ev) {
      if (!read_some(0)) break;
      continue;
    }
    if (!handle_event(*ev, "", observer, &reports)) break;
  }
  keep_for_next_block(std::move(reports));
}

Status SupervisorClient::reset(const std::string& language) {
  if (!ready_) return Status::ok();  // nothing to reset yet
  return send({{"op", "reset"}, {"language", language}});
}

void SupervisorClient::finish(ExecObserver& observer) {
  if (pid_ >= 0 && ready_ && to_child_) {
    (void)send({{"op", "shutdown"}});
    to_child_.reset();  // asks that come now are not answered: the sandbox is going away
    // What it reports while it tears the sandbox down, until it closes its stdout.
    ExecResult reports;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (true) {
      if (auto ev = take_line()) {
        (void)handle_event(*ev, "", observer, &reports);
        continue;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !read_some(static_cast<int>(left.count()))) break;
    }
  }
  shutdown();
}

void SupervisorClient::shutdown() {
  if (pid_ < 0) return;
  if (to_child_) {
    (void)send({{"op", "shutdown"}});
    to_child_.reset();  // EOF on its stdin as well
  }
  // Wait briefly for a clean exit (it tears down the sandbox), then insist.
  int status = 0;
  for (int i = 0; i < 300; ++i) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    ::usleep(10000);
  }
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) != pid_; ++i) ::usleep(10000);
    if (::waitpid(pid_, &status, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }
  from_child_.reset();
  err_child_.reset();
  ready_ = false;
}

}  // namespace oishell::agent
