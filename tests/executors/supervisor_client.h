#pragma once
// A test client of `oishell supervise`: starts it with pipes, sends requests, and collects events on a reader
// thread so the supervisor is never blocked on its stdout (as a real client must do too).
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace oishell::test {

struct BlockResult {
  std::string out;                   // concatenated stdout output
  std::string err;                   // concatenated stderr output
  nlohmann::json done;               // the done event (null when it did not come)
  std::vector<nlohmann::json> events;  // every event carrying this id, in order
};

class SupervisorClient {
 public:
  explicit SupervisorClient(std::vector<std::string> args);
  ~SupervisorClient();
  bool started() const { return pid_ > 0; }
  // The `oishell supervise` process (-1 once it was collected).
  pid_t pid() const { return pid_; }

  void send(const nlohmann::json& request);
  void send_raw(const std::string& line);
  // Waits until an event matching `pred` arrived (searching from event index `from`); returns it or null.
  nlohmann::json wait_for(const std::function<bool(const nlohmann::json&)>& pred, std::chrono::milliseconds timeout,
                          size_t from = 0);
  nlohmann::json wait_event(const std::string& name, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // Sends exec and waits for its done.
  BlockResult run(const std::string& language, const std::string& code,
                  std::chrono::milliseconds timeout = std::chrono::seconds(30));
  BlockResult collect(const std::string& id, std::chrono::milliseconds timeout);
  std::string next_id();
  std::vector<nlohmann::json> events();
  // Closes stdin and waits for the process; returns its exit status.
  int finish(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  const nlohmann::json& ready() const { return ready_; }

 private:
  void read_loop();
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<nlohmann::json> events_;
  bool eof_ = false;
  int next_ = 0;
  nlohmann::json ready_;
};

// A fresh directory under $TMPDIR, removed when the object dies.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline const char* oishell_bin() { return OISHELL_BIN; }

// A case run against each sandbox mode (the parameter: "none" or "openshell"), with a workspace of its own.
class SupervisorModeTest : public ::testing::TestWithParam<std::string> {
 protected:
  // `oishell supervise --sandbox MODE --workspace DIR EXTRA...`, once it said it is ready.
  std::unique_ptr<SupervisorClient> start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--sandbox", GetParam(), "--workspace", dir_.path()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto client = std::make_unique<SupervisorClient>(args);
    EXPECT_TRUE(client->ready().is_object()) << "no ready event from oishell supervise " << GetParam();
    return client;
  }
  ScratchDir dir_;
};

}  // namespace oishell::test
