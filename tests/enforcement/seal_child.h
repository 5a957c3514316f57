#pragma once
// In-process enforcement tests of the sealing modules (Landlock, capabilities, seccomp, limits): sealing is
// irreversible, so each case runs in a forked child that applies one module and reports what each attempt gave.
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/outside/events.h"
#include "runtime/inside/seccomp.h"
#include "runtime/outside/seccomp_notifier.h"

namespace oishell::test {

// What a child reported: "key" -> "ok" / "EPERM" / a value, plus how it ended.
struct ChildReport {
  int status = -1;  // exit code, or 128+N for signal N
  std::map<std::string, std::string> values;
  std::string log;  // every line, for failure messages
  std::string at(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? "<missing " + key + ">" : it->second;
  }
};

// Given to the child: report(key, value) records one result (written to the parent at once, so a crash later
// keeps it). send_fd() passes a descriptor (a seccomp notify fd) up to the parent.
class Child {
 public:
  Child(int report_fd, int fd_socket) : report_fd_(report_fd), fd_socket_(fd_socket) {}
  void report(const std::string& key, const std::string& value) const;
  // "ok" when rc >= 0, else the errno name of errno.
  void result(const std::string& key, long rc) const;
  bool send_fd(int fd) const;
  // The report pipe, for a grandchild that writes "key=value" lines itself (after dup2 to a known number).
  int report_fd() const { return report_fd_; }

 private:
  int report_fd_;
  int fd_socket_;
};

// "ok" for rc >= 0, else the name of errno ("EPERM").
std::string errno_result(long rc);

class CollectingSink final : public EventSink {
 public:
  void emit(const nlohmann::json& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(event);
  }
  std::vector<nlohmann::json> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<nlohmann::json> events_;
};

// Forks; the child runs body(child) and exits with its return value. When `notify_spec` is given, the child must
// send its seccomp notify fd first (Child::send_fd) and the parent serves it with a SeccompNotifier into `sink`
// until the child exits. The child is killed after timeout_seconds.
ChildReport run_in_child(const std::function<int(const Child&)>& body, const SeccompSpec* notify_spec = nullptr,
                         EventSink* sink = nullptr, int timeout_seconds = 30);

}  // namespace oishell::test
