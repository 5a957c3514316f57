// oishell-kube: one sandboxed session as a Kubernetes pod, for `interpreter --kubernetes` (deploy/kubernetes/
// README.md). Creates the session pod, waits until it runs, attaches to `oishell supervise` in it and copies its
// stdin and stdout (the supervisor protocol) through, then deletes the pod: when the session ends, when this process
// is signalled, and when its parent (the agent) dies. The pod's activeDeadlineSeconds ends it if all of that fails.
//
//   oishell-kube session [--kubernetes CONTEXT/NAMESPACE/TEMPLATE] [--start-timeout SECONDS] -- SUPERVISE_ARGS...
//
// Exit status: the supervisor's; 126 when the pod could not be created, started or attached to (the reason, in
// the API server's words, on stderr).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "agent/kubernetes/kube_api.h"
#include "agent/kubernetes/kube_config.h"
#include "agent/kubernetes/kube_pod.h"
#include "base/data_dir.h"

namespace {

using namespace oishell;
using namespace oishell::agent;

constexpr int kExitStartFailed = 126;

int fail(const std::string& what) {
  std::fprintf(stderr, "oishell-kube: %s\n", what.c_str());
  return kExitStartFailed;
}

bool write_all(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Copies stdin to the container and its output to stdout/stderr until the stream ends or a signal comes.
int bridge(KubeAttach& attach, int signal_fd) {
  bool stdin_open = true;
  std::optional<int> exit_code;  // the status may come in one read and the end of the stream in a later one
  std::optional<std::chrono::steady_clock::time_point> stdin_closed_at;
  char buf[65536];
  while (true) {
    pollfd fds[3] = {{attach.fd(), POLLIN, 0}, {signal_fd, POLLIN, 0}, {stdin_open ? STDIN_FILENO : -1, POLLIN, 0}};
    int ready = ::poll(fds, 3, 1000);
    if (ready < 0 && errno != EINTR) return fail(std::string("poll: ") + std::strerror(errno));
    if (fds[1].revents) return 128 + SIGTERM;
    if (fds[2].revents) {
      ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n > 0) {
        if (Status s = attach.send_stdin(std::string_view(buf, static_cast<size_t>(n))); !s.is_ok()) {
          return fail(s.message());
        }
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        stdin_open = false;  // the attach protocol cannot close the container's stdin: the session ends instead
        stdin_closed_at = std::chrono::steady_clock::now();
      }
    }
    KubeAttach::Received got;
    if (Status s = attach.receive(&got); !s.is_ok()) return fail(s.message());
    if (!got.out.empty() && !write_all(STDOUT_FILENO, got.out)) return 128 + SIGPIPE;
    if (!got.err.empty()) write_all(STDERR_FILENO, got.err);
    if (!got.error.empty()) std::fprintf(stderr, "oishell-kube: the session pod: %s\n", got.error.c_str());
    if (got.exit_code) exit_code = got.exit_code;
    if (got.ended) {
      if (exit_code) return *exit_code;
      return got.error.empty() ? fail("the session pod's stream ended without an exit status (evicted or deleted?)")
                               : kExitStartFailed;
    }
    if (stdin_closed_at && std::chrono::steady_clock::now() - *stdin_closed_at > std::chrono::seconds(10)) return 0;
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "session") != 0) {
    std::fprintf(stderr, "usage: oishell-kube session [--kubernetes CONTEXT/NAMESPACE/TEMPLATE] "
                         "[--start-timeout SECONDS] -- SUPERVISE_ARGS...\n");
    return 2;
  }
  std::string spec;
  long start_timeout = 120;
  std::vector<std::string> supervise_args;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      supervise_args.assign(argv + i + 1, argv + argc);
      break;
    }
    if (arg == "--kubernetes" && i + 1 < argc) {
      spec = argv[++i];
    } else if (arg == "--start-timeout" && i + 1 < argc) {
      start_timeout = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "oishell-kube: unknown argument `%s`\n", arg.c_str());
      return 2;
    }
  }
  // The agent's death ends the session: SIGTERM, handled below like any other.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  ::sigprocmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (getppid() == 1) return fail("the agent is gone");

  auto env = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto target = load_kube_target(spec, env);
  if (!target) return fail("where is the cluster: " + target.status().message());
  std::string template_text = target->pod_template;
  if (template_text.empty()) {
    const std::string path = data_path("deploy/kubernetes/pod.yaml");
    template_text = read_text(path);
    if (template_text.empty()) return fail("no session pod template at " + path);
  }
  const std::string name = session_pod_name();
  auto pod = session_pod(template_text, name, supervise_args);
  if (!pod) return fail(pod.status().message());

  KubeApi api(*target);
  if (auto created = api.call("POST", api.pods_path(), &*pod); !created) {
    return fail("creating the session pod in namespace " + target->namespace_name + ": " +
                created.status().message());
  }
  int status = kExitStartFailed;
  if (Status running = api.wait_running(name, std::chrono::seconds(start_timeout)); !running.is_ok()) {
    status = fail(running.message());
  } else if (auto attach = api.attach(name, supervisor_container(*pod)); !attach) {
    status = fail(attach.status().message());
  } else {
    status = bridge(**attach, signal_fd);
  }
  if (auto deleted = api.call("DELETE", api.pods_path() + "/" + name); !deleted) {
    std::fprintf(stderr, "oishell-kube: deleting the session pod %s: %s (its deadline of %ld s ends it)\n",
                 name.c_str(), deleted.status().message().c_str(), kSessionDeadlineSeconds);
  }
  return status;
}
