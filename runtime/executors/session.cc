#include "runtime/executors/session.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <variant>

namespace oishell::executors {
namespace {

constexpr size_t kMaxRequestBytes = 64u << 20;  // one request line (code + stdin) at most

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string basename_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

std::vector<AvailableLanguage> available_languages(const SandboxSpec& spec, const SessionOptions& options) {
  std::vector<AvailableLanguage> out;
  for (const auto& language : all_languages()) {
    const std::string driver_file = basename_of(language.driver);
    if (!file_exists(options.drivers_host + "/" + driver_file)) continue;
    std::string program = find_program(language.program, spec, options.confined);
    if (program.empty()) continue;
    if (!std::all_of(language.also_requires.begin(), language.also_requires.end(), [&](const std::string& other) {
          return !find_program(other, spec, options.confined).empty();
        }))
      continue;
    out.push_back({&language, program, options.drivers_inside + "/" + driver_file});
  }
  return out;
}

Session::Session(Sandbox& sandbox, EventOutput& events, std::vector<AvailableLanguage> languages,
                 SessionOptions options)
    : sandbox_(sandbox), events_(events), languages_(std::move(languages)), options_(std::move(options)) {}

Session::~Session() { shutdown_all(); }

Executor* Session::executor_for(const Language& language, bool create) {
  auto it = executors_.find(language.name);
  if (it != executors_.end()) return it->second.get();
  if (!create) return nullptr;
  for (const auto& available : languages_) {
    if (available.language == &language) {
      auto executor = std::make_unique<Executor>(language, available.program, available.driver, sandbox_, events_,
                                                 options_.executor);
      return executors_.emplace(language.name, std::move(executor)).first->second.get();
    }
  }
  return nullptr;
}

Executor* Session::executor_with_block(const std::string& id) {
  for (auto& [name, executor] : executors_) {
    if (executor->has_block(id)) return executor.get();
  }
  return nullptr;
}

bool Session::busy() const {
  for (const auto& [name, executor] : executors_) {
    if (!executor->idle()) return true;
  }
  return !commands_.empty();
}

bool Session::id_in_use(const std::string& id) { return executor_with_block(id) || commands_.count(id); }

void Session::handle(RunRequest request) {
  if (id_in_use(request.id)) {
    events_.emit(error_event("run: id `" + request.id + "` is already running or queued", request.id));
    return;
  }
  for (const auto& arg : request.argv) {
    if (arg.find('\0') != std::string::npos) {
      events_.emit(error_event("run: argv must not contain NUL characters", request.id));
      return;
    }
  }
  const std::string id = request.id;
  auto command = std::make_unique<Command>(std::move(request), sandbox_, events_, options_.executor);
  if (!command->finished()) commands_.emplace(id, std::move(command));
}

void Session::handle(const ExecRequest& request) {
  const Language* language = find_language(request.language);
  if (!language) {
    std::string names;
    for (const auto& l : all_languages()) names += (names.empty() ? "" : ", ") + l.name;
    events_.emit(error_event("exec: unknown language `" + request.language + "` (" + names + ")", request.id));
    return;
  }
  Executor* executor = executor_for(*language, true);
  if (!executor) {
    std::string programs = "`" + language->program + "`";
    for (const auto& other : language->also_requires) programs += " or `" + other + "`";
    events_.emit(error_event(
        "exec: " + language->name + " is not available in this sandbox (" + programs + " is not on its PATH)",
        request.id));
    return;
  }
  if (id_in_use(request.id)) {
    events_.emit(error_event("exec: block `" + request.id + "` is already running or queued", request.id));
    return;
  }
  if (request.stdin_data && !language->accepts_stdin) {
    events_.emit(error_event("exec: " + language->name + " blocks cannot be given stdin", request.id));
    return;
  }
  if (request.code.find('\0') != std::string::npos ||
      (request.stdin_data && request.stdin_data->find('\0') != std::string::npos)) {
    events_.emit(error_event("exec: code and stdin must not contain NUL characters", request.id));
    return;
  }
  executor->submit(request);
}

void Session::handle_line(const std::string& line) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) return;
  auto parsed = parse_request(line);
  if (!parsed) {
    events_.emit(error_event(parsed.status().message()));
    return;
  }
  std::visit(Overloaded{
                 [&](const ExecRequest& r) { handle(r); },
                 [&](RunRequest& r) { handle(std::move(r)); },
                 [&](const InterruptRequest& r) {
                   if (auto it = commands_.find(r.id); it != commands_.end()) return it->second->interrupt();
                   Executor* executor = executor_with_block(r.id);
                   if (!executor || !executor->interrupt(r.id))
                     events_.emit(error_event("interrupt: no running or queued block `" + r.id + "`", r.id));
                 },
                 [&](const InputRequest& r) {
                   events_.emit(error_event("input: a running block's stdin cannot be written in protocol 1; give "
                                            "the block's whole stdin in exec's `stdin`",
                                            r.id));
                 },
                 [&](const ResetRequest& r) {
                   const Language* language = find_language(r.language);
                   Executor* executor = language ? executor_for(*language, true) : nullptr;
                   if (!executor) {
                     events_.emit(error_event("reset: no language `" + r.language + "` in this sandbox"));
                     return;
                   }
                   executor->reset();
                 },
                 [&](const AnswerRequest& r) { sandbox_.answer_ask(r.ask_id, r.decision); },
                 [&](const ShutdownRequest&) { stop_ = true; },
                 [&](const PolicyRequest& r) {
                   if (options_.on_policy) return events_.emit(options_.on_policy(r));
                   nlohmann::json rejected = {{"event", "policy.rejected"},
                                              {"errors", {"this session cannot change its policy"}}};
                   if (!r.ref.empty()) rejected["ref"] = r.ref;
                   events_.emit(rejected);
                 },
             },
             *parsed);
}

void Session::shutdown_all() {
  for (auto& [name, executor] : executors_) executor->shutdown();
  for (auto& [id, command] : commands_) command->shutdown();
  commands_.clear();
}

int Session::run(int in_fd, const nlohmann::json& ready_extra) {
  int flags = ::fcntl(in_fd, F_GETFL);
  if (flags >= 0) ::fcntl(in_fd, F_SETFL, flags | O_NONBLOCK);

  nlohmann::json ready = {{"event", "ready"}, {"protocol", kProtocolVersion}};
  nlohmann::json names = nlohmann::json::array();
  nlohmann::json details = nlohmann::json::array();
  for (const auto& available : languages_) {
    names.push_back(available.language->name);
    details.push_back({{"name", available.language->name},
                       {"aliases", available.language->aliases},
                       {"program", available.program}});
  }
  ready["languages"] = names;
  ready["executors"] = details;
  for (const auto& [key, value] : ready_extra.items()) ready[key] = value;
  for (const auto& name : options_.prestart) {
    const Language* language = find_language(name);
    if (Executor* executor = language ? executor_for(*language, true) : nullptr) executor->reset();
  }
  events_.emit(ready);

  std::string input;
  bool input_open = true;
  std::vector<pollfd> fds;
  char buffer[64 * 1024];
  while (!stop_) {
    if (!input_open && !busy()) break;  // input ended and every block finished
    fds.clear();
    if (input_open) fds.push_back({in_fd, POLLIN, 0});
    fds.push_back({sandbox_.wait_fd(), POLLIN, 0});
    // Executors and commands alike; valid until requests are handled below (they may add to either).
    std::vector<PollClient*> clients;
    for (const auto& [name, executor] : executors_) clients.push_back(executor.get());
    for (const auto& [id, command] : commands_) clients.push_back(command.get());
    for (const PollClient* client : clients) client->add_pollfds(fds);
    int timeout = -1;
    for (const PollClient* client : clients) {
      if (auto deadline = client->next_deadline()) {
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count() + 1;
        int t = ms < 0 ? 0 : static_cast<int>(std::min<long long>(ms, 60'000));
        if (timeout < 0 || t < timeout) timeout = t;
      }
    }
    int n = ::poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) {
      events_.emit(error_event("poll: " + errno_text(errno)));
      break;
    }
    // Output first, then exits (a process's last output comes before its `done`), then requests.
    for (const auto& pfd : fds) {
      if (!pfd.revents || pfd.fd == in_fd || pfd.fd == sandbox_.wait_fd()) continue;
      auto owner = std::find_if(clients.begin(), clients.end(), [&](PollClient* c) { return c->owns_fd(pfd.fd); });
      if (owner != clients.end()) (*owner)->on_fd(pfd.fd, pfd.revents);
    }
    while (auto exit = sandbox_.next_exit()) {
      for (PollClient* client : clients) {
        if (client->on_exit(*exit)) break;
      }
    }
    const auto now = Clock::now();
    for (PollClient* client : clients) client->on_time(now);
    std::erase_if(commands_, [](const auto& entry) { return entry.second->finished(); });
    if (input_open && !fds.empty() && fds[0].fd == in_fd && fds[0].revents) {
      for (;;) {
        ssize_t got = ::read(in_fd, buffer, sizeof buffer);
        if (got > 0) {
          input.append(buffer, static_cast<size_t>(got));
          size_t start = 0;
          for (size_t nl; !stop_ && (nl = input.find('\n', start)) != std::string::npos; start = nl + 1) {
            handle_line(input.substr(start, nl - start));
          }
          input.erase(0, start);
          if (input.size() > kMaxRequestBytes) {
            events_.emit(error_event("request longer than 64 MiB; dropped"));
            input.clear();
          }
          if (stop_) break;
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got == 0 || errno != EAGAIN) {
          if (!input.empty()) handle_line(input);
          input.clear();
          input_open = false;
        }
        break;
      }
    }
    if (!events_.healthy()) break;  // the client is gone
  }
  shutdown_all();
  return 0;
}

}  // namespace oishell::executors
