// The network policy of a running sandbox changed live (issue 38), end to end: through the supervisor protocol's
// `policy` request while a python client inside loops, and through `oishell run --watch-policy` with the policy file
// edited mid-run. Names are pinned to the host's 127.0.0.1 (`hosts:`), where a small HTTP server answers `ok`;
// without the sandbox every refused request would reach it.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/executors/supervisor_client.h"

namespace oishell::test {
namespace {

using namespace std::chrono_literals;

// HTTP/1.1 on 127.0.0.1: every request answered `200 ok`, connections kept alive, one thread each.
class OkServer {
 public:
  OkServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] {
      while (!stop_) {
        int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        std::lock_guard lock(mu_);
        workers_.emplace_back([c] {
          std::string in;
          char buf[4096];
          for (;;) {
            ssize_t n = ::read(c, buf, sizeof buf);
            if (n <= 0) break;
            in.append(buf, static_cast<size_t>(n));
            for (size_t end; (end = in.find("\r\n\r\n")) != std::string::npos;) {
              in.erase(0, end + 4);
              static const char kOk[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
              if (::send(c, kOk, sizeof kOk - 1, MSG_NOSIGNAL) < 0) break;
            }
          }
          ::close(c);
        });
      }
    });
  }
  ~OkServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    if (acceptor_.joinable()) acceptor_.join();
    ::close(fd_);
    std::lock_guard lock(mu_);
    for (auto& w : workers_) w.detach();  // each ends when its client does (the sandbox is gone by now)
  }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
};

std::string write_file(const std::string& path, const std::string& text) {
  std::string tmp = path + ".new";
  std::ofstream(tmp) << text;
  ::rename(tmp.c_str(), path.c_str());  // as editors save: a new file renamed over the old one
  return path;
}

// alpha.test allowed; gamma.test allowed uninspected (a brokered connect gets the supervisor's socket, kernel to
// kernel); beta.test on nobody's list (on_unlisted: deny) unless `beta` says what to do with it.
std::string policy_text(const std::string& beta = "") {
  std::string text =
      "version: 1\nextends: default\nnetwork:\n  on_unlisted: deny\n"
      "  hosts: {alpha.test: 127.0.0.1, beta.test: 127.0.0.1, gamma.test: 127.0.0.1}\n"
      "  allow_private: [127.0.0.1/32]\n"
      "  allow: [alpha.test, {host: gamma.test, inspect: false}";
  if (beta == "allow") text += ", beta.test";
  text += "]\n";
  if (beta == "deny") text += "  deny: [beta.test]\n";
  return text;
}

// The python client: fetch(host) is the status of a GET through the relay (HTTP_PROXY), or the exception's name;
// a background thread fetches beta.test every 10 ms and records (epoch, outcome), epoch being what the test set
// when the fetch began.
std::string client_code(uint16_t port) {
  return "import threading, time, urllib.request, urllib.error, http.client\n"
         "PORT = " + std::to_string(port) + "\n"
         "def fetch(host):\n"
         "    try:\n"
         "        with urllib.request.urlopen(f'http://{host}:{PORT}/', timeout=5) as r:\n"
         "            return str(r.status)\n"
         "    except urllib.error.HTTPError as e:\n"
         "        return str(e.code)\n"
         "    except Exception as e:\n"
         "        return type(e).__name__\n"
         "epoch = 0\n"
         "results = []\n"
         "def loop():\n"
         "    while True:\n"
         "        e = epoch\n"
         "        results.append((e, fetch('beta.test')))\n"
         "        time.sleep(0.01)\n"
         "threading.Thread(target=loop, daemon=True).start()\n"
         "def outcomes(e, at_least=5):\n"
         "    deadline = time.time() + 10\n"
         "    while len([1 for x, _ in results if x == e]) < at_least and time.time() < deadline:\n"
         "        time.sleep(0.01)\n"
         "    return ' '.join(sorted(set(o for x, o in results if x == e)))\n"
         "print('started')\n";
}

class LivePolicyTest : public ::testing::Test {
 protected:
  std::unique_ptr<SupervisorClient> start() {
    policy_ = write_file(policy_dir_.path() + "/policy.yaml", policy_text());
    auto client = std::make_unique<SupervisorClient>(
        std::vector<std::string>{"--sandbox", "openshell", "--workspace", workspace_.path(), "--policy", policy_});
    EXPECT_TRUE(client->ready().is_object()) << "no ready event";
    return client;
  }
  // Sends a policy request and returns its answer (policy.changed or policy.rejected).
  nlohmann::json change(SupervisorClient& client, nlohmann::json request) {
    static int next = 0;
    std::string ref = "p" + std::to_string(++next);
    request["op"] = "policy";
    request["ref"] = ref;
    size_t from = client.events().size();
    client.send(request);
    return client.wait_for(
        [&](const nlohmann::json& e) {
          return e.value("ref", "") == ref &&
                 (e.value("event", "") == "policy.changed" || e.value("event", "") == "policy.rejected");
        },
        20s, from);
  }
  static std::string lines(const nlohmann::json& list) {
    std::string out;
    for (const auto& l : list) out += l.get<std::string>() + "\n";
    return out;
  }
  OkServer server_;
  ScratchDir workspace_;
  ScratchDir policy_dir_;  // outside the workspace: nothing inside can edit the policy
  std::string policy_;
};

TEST_F(LivePolicyTest, WidenedAndNarrowedWhileAClientInsideLoops) {
  ASSERT_NE(0, server_.port());
  auto client = start();
  ASSERT_EQ("started\n", client->run("python", client_code(server_.port())).out);
  // Before: beta is refused by the relay (403, on_unlisted: deny); alpha, its neighbour, works.
  EXPECT_EQ("403\n", client->run("python", "print(outcomes(0))").out);
  EXPECT_EQ("200\n", client->run("python", "print(fetch('alpha.test'))").out);

  // Widened: every fetch that starts after the answer is allowed.
  auto widened = change(*client, {{"allow", {"beta.test"}}});
  ASSERT_EQ("policy.changed", widened.value("event", "")) << widened.dump();
  EXPECT_EQ("network: allow beta.test\n", lines(widened["widened"]));
  EXPECT_TRUE(widened["narrowed"].empty());
  EXPECT_EQ("200\n", client->run("python", "epoch = 1\nprint(outcomes(1))").out);

  // A tunnel to beta held open (CONNECT, one request answered) ...
  EXPECT_EQ("200\n", client->run("python",
                                 "held = http.client.HTTPConnection('127.0.0.1', 3128, timeout=5)\n"
                                 "held.set_tunnel('beta.test', PORT)\n"
                                 "held.request('GET', '/')\n"
                                 "r = held.getresponse(); r.read(); print(r.status)").out);
  // ... is closed when beta is denied, and so is every fetch after it; alpha still works.
  auto narrowed = change(*client, {{"deny", {"beta.test"}}});
  ASSERT_EQ("policy.changed", narrowed.value("event", "")) << narrowed.dump();
  EXPECT_EQ("network: allow beta.test\nnetwork: beta.test is not denied (the other denies it)\n",
            lines(narrowed["narrowed"]));
  EXPECT_GE(narrowed.value("closed_connections", 0), 1) << narrowed.dump();
  EXPECT_LT(narrowed.value("applied_us", 1'000'000), 1'000'000);
  // The relay closed it: EOF (RemoteDisconnected), or a reset when the request was sent into the closed socket.
  EXPECT_EQ("closed\n", client->run("python",
                                    "try:\n"
                                    "    held.request('GET', '/')\n"
                                    "    r = held.getresponse(); print(r.status)\n"
                                    "except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):\n"
                                    "    print('closed')\n"
                                    "except Exception as e:\n"
                                    "    print(type(e).__name__)").out);
  EXPECT_EQ("403\n", client->run("python", "epoch = 2\nprint(outcomes(2))").out);
  EXPECT_EQ("200\n", client->run("python", "print(fetch('alpha.test'))").out);

  // Refused proposals apply nothing: an invalid rule, and a filesystem change (the file read again).
  auto invalid = change(*client, {{"allow", {"*"}}, {"deny", nlohmann::json::array()}});
  ASSERT_EQ("policy.rejected", invalid.value("event", "")) << invalid.dump();
  EXPECT_NE(std::string::npos, lines(invalid["errors"]).find("network.allow")) << invalid.dump();
  write_file(policy_, policy_text("allow") + "filesystem:\n  read_only: [/srv]\n");
  auto files = change(*client, {{"reload", true}});
  ASSERT_EQ("policy.rejected", files.value("event", "")) << files.dump();
  EXPECT_NE(std::string::npos, lines(files["errors"]).find("the filesystem section cannot change on a running "
                                                           "sandbox"))
      << files.dump();
  EXPECT_EQ("403\n", client->run("python", "epoch = 3\nprint(outcomes(3))").out);
  EXPECT_EQ("200\n", client->run("python", "print(fetch('alpha.test'))").out);
  EXPECT_EQ(0, client->finish());
}

// A connection the broker installed (inspect: false) has no relay in its path: the narrowing finds it in the
// sandbox's processes and shuts it down there.
TEST_F(LivePolicyTest, ABrokeredConnectionToANowDeniedHostIsShutDown) {
  ASSERT_NE(0, server_.port());
  auto client = start();
  ASSERT_EQ("started\n", client->run("python", client_code(server_.port())).out);
  EXPECT_EQ("200\n", client->run("python",
                                 "import socket\n"
                                 "raw = socket.create_connection(('gamma.test', PORT), timeout=5)\n"
                                 "raw.sendall(b'GET / HTTP/1.1\\r\\nHost: gamma.test\\r\\n\\r\\n')\n"
                                 "print(raw.recv(100).decode().split()[1])").out);
  auto narrowed = change(*client, {{"deny", {"gamma.test"}}});
  ASSERT_EQ("policy.changed", narrowed.value("event", "")) << narrowed.dump();
  EXPECT_EQ(1, narrowed.value("closed_connections", 0)) << narrowed.dump();
  // The program reads the end of the connection; a new one fails at the name (the DNS stub answers NXDOMAIN).
  EXPECT_EQ("eof\n", client->run("python",
                                 "try:\n"
                                 "    print('eof' if raw.recv(100) == b'' else 'data')\n"
                                 "except Exception as e:\n"
                                 "    print(type(e).__name__)").out);
  EXPECT_EQ("gaierror\n", client->run("python",
                                      "try:\n"
                                      "    socket.create_connection(('gamma.test', PORT), timeout=5); print('connected')\n"
                                      "except Exception as e:\n"
                                      "    print(type(e).__name__)").out);
  EXPECT_EQ("200\n", client->run("python", "print(fetch('alpha.test'))").out);
  EXPECT_EQ(0, client->finish());
}

TEST_F(LivePolicyTest, NoSandboxNoPolicyToChange) {
  auto client = std::make_unique<SupervisorClient>(
      std::vector<std::string>{"--sandbox", "none", "--workspace", workspace_.path()});
  ASSERT_TRUE(client->ready().is_object());
  auto answer = change(*client, {{"allow", {"beta.test"}}});
  ASSERT_EQ("policy.rejected", answer.value("event", "")) << answer.dump();
  EXPECT_NE(std::string::npos, lines(answer["errors"]).find("no sandbox")) << answer.dump();
}

// `oishell run --watch-policy`: the command's stdout (a pipe) and the events file read as they come.
class WatchedRun {
 public:
  WatchedRun(const std::vector<std::string>& args) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return;
    std::vector<std::string> argv = {oishell_bin(), "run"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], 1);
      int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    out_ = out[0];
    reader_ = std::thread([this] {
      char buf[4096];
      for (ssize_t n; (n = ::read(out_, buf, sizeof buf)) > 0;) {
        std::lock_guard lock(mu_);
        text_.append(buf, static_cast<size_t>(n));
      }
    });
  }
  ~WatchedRun() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
    if (out_ >= 0) ::close(out_);
  }
  // Waits until the output's last line is `line`.
  bool wait_last_line(const std::string& line, std::chrono::milliseconds timeout = 15s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mu_);
        if (text_.ends_with("\n" + line + "\n") || text_ == line + "\n") return true;
      }
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }
  std::string output() {
    std::lock_guard lock(mu_);
    return text_;
  }
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::string text_;
};

// The events of `file` named `name`, waiting up to 15 s for the `count`-th.
std::vector<nlohmann::json> events_named(const std::string& file, const std::string& name, size_t count) {
  auto deadline = std::chrono::steady_clock::now() + 15s;
  std::vector<nlohmann::json> found;
  do {
    found.clear();
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      auto event = nlohmann::json::parse(line, nullptr, false);
      if (!event.is_discarded() && event.value("event", "") == name) found.push_back(event);
    }
    if (found.size() >= count) break;
    std::this_thread::sleep_for(20ms);
  } while (std::chrono::steady_clock::now() < deadline);
  return found;
}

TEST_F(LivePolicyTest, WatchPolicyAppliesAnEditAndKeepsThePolicyOnAnInvalidOne) {
  ASSERT_NE(0, server_.port());
  policy_ = write_file(policy_dir_.path() + "/policy.yaml", policy_text());
  const std::string events = policy_dir_.path() + "/events.jsonl";
  const std::string stop = workspace_.path() + "/stop";
  // Prints each outcome of fetching beta.test that differs from the one before, alpha's beside it.
  const std::string script = "import os, time, urllib.request, urllib.error\n"
                             "def fetch(host):\n"
                             "    try:\n"
                             "        with urllib.request.urlopen(f'http://{host}:" +
                             std::to_string(server_.port()) +
                             "/', timeout=5) as r:\n"
                             "            return str(r.status)\n"
                             "    except urllib.error.HTTPError as e:\n"
                             "        return str(e.code)\n"
                             "    except Exception as e:\n"
                             "        return type(e).__name__\n"
                             "last = None\n"
                             "deadline = time.time() + 60\n"
                             "while not os.path.exists('" + stop + "') and time.time() < deadline:\n"
                             "    now = 'beta ' + fetch('beta.test') + ' alpha ' + fetch('alpha.test')\n"
                             "    if now != last:\n"
                             "        print(now, flush=True)\n"
                             "        last = now\n"
                             "    time.sleep(0.02)\n";
  WatchedRun run({"--watch-policy", "--policy", policy_, "--workspace", workspace_.path(), "--events", events, "--",
                  "python3", "-c", script});
  ASSERT_TRUE(run.wait_last_line("beta 403 alpha 200")) << run.output();

  write_file(policy_, policy_text("allow"));
  auto changed = events_named(events, "policy.changed", 1);
  ASSERT_EQ(1u, changed.size());
  EXPECT_EQ("file", changed[0].value("source", ""));
  EXPECT_EQ("network: allow beta.test\n", lines(changed[0]["widened"]));
  ASSERT_TRUE(run.wait_last_line("beta 200 alpha 200")) << run.output();

  // Invalid YAML: the old policy stays (beta still allowed), and the error is an event.
  std::ofstream(policy_) << "version: 1\nnetwork:\n  allow: [alpha.test\n";
  auto rejected = events_named(events, "policy.rejected", 1);
  ASSERT_EQ(1u, rejected.size());
  EXPECT_NE(std::string::npos, lines(rejected[0]["errors"]).find("policy.yaml:")) << rejected[0].dump();
  std::this_thread::sleep_for(300ms);
  EXPECT_TRUE(run.wait_last_line("beta 200 alpha 200", 100ms)) << run.output();

  // A valid edit after it applies again: beta denied, alpha still allowed.
  write_file(policy_, policy_text("deny"));
  ASSERT_EQ(2u, events_named(events, "policy.changed", 2).size());
  ASSERT_TRUE(run.wait_last_line("beta 403 alpha 200")) << run.output();

  std::ofstream(stop) << "";
  EXPECT_EQ(0, run.wait()) << run.output();
}

TEST_F(LivePolicyTest, WatchPolicyRefusesAPolicyFileTheSandboxCouldWrite) {
  std::string inside = write_file(workspace_.path() + "/policy.yaml", policy_text());
  WatchedRun run({"--watch-policy", "--policy", inside, "--workspace", workspace_.path(), "--", "true"});
  EXPECT_EQ(2, run.wait());  // usage error, nothing started
  // The neighbour: the same file outside the workspace is watched and the command runs.
  policy_ = write_file(policy_dir_.path() + "/policy.yaml", policy_text());
  WatchedRun outside({"--watch-policy", "--policy", policy_, "--workspace", workspace_.path(), "--", "true"});
  EXPECT_EQ(0, outside.wait());
}

}  // namespace
}  // namespace oishell::test
