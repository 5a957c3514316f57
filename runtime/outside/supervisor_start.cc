// Bringing a SupervisedSandbox up (supervisor.h), in the order of its start: the layers this machine gives weighed
// against the policy's guarantees, init cloned (or taken from the caller) and sent its part of the spec, the
// supervisor's own share done while init builds its mount tree (cgroups and limits, the seccomp program, the relay),
// the first process queued behind `joined`, then init's set-up messages read (its listeners and namespaces, then
// `ready`) and the seccomp listener, the relay, the DNS stub, the datagram relay and the connect broker started. A
// forwarded signal stops the set-up; a failure reports init's own reason when it has one. Running the sandbox is
// supervisor.cc's and supervisor_monitor.cc's.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/startup_trace.h"
#include "runtime/broker/broker.h"
#include "runtime/fd_passing.h"
#include "runtime/init_spec_codec.h"
#include "runtime/inside/seccomp.h"
#include "runtime/outside/host_advice.h"
#include "runtime/outside/idmapped_binds.h"
#include "runtime/outside/layer_facts.h"
#include "runtime/outside/supervisor.h"

namespace oishell {

Result<std::unique_ptr<Sandbox>> SupervisedSandbox::start(const SandboxSpec& spec, EventSink& events,
                                                          SandboxOptions options) {
  // Which layers hold each guarantee here; with `landlock: required`, none may be held by no layer.
  auto facts = layer_facts();
  if (!facts.is_ok()) return facts.status().with_context("landlock");
  auto guarantees = assess_guarantees(spec, *facts);
  if (spec.landlock.required) {
    if (std::string why = refusal(guarantees); !why.empty()) return Status::error(why);
  }
  SandboxSpec capped = spec;
  capped.landlock.abi_limit = facts->landlock_abi;  // what init asks of the kernel, and no more
  // TLS termination: the CA, the credentials, and in the spec the trust bundle and the placeholders.
  auto https = prepare_https(capped, [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  }, read_host_file);
  if (!https.is_ok()) return https.status();
  std::unique_ptr<SupervisedSandbox> sandbox(new SupervisedSandbox(capped, events));
  sandbox->layer_facts_ = *facts;
  sandbox->https_ = std::move(https.value());
  sandbox->guarantees_ = std::move(guarantees);
  if (Status status = sandbox->launch(std::move(options)); !status.is_ok()) {
    sandbox->shutdown();
    // A layer this machine does not give (a container's seccomp profile, a sysctl, AppArmor): and what enables it.
    return std::move(status).with_advice(sandbox_blocked_advice(host_signals(), status.message()));
  }
  return std::unique_ptr<Sandbox>(std::move(sandbox));
}

Status SupervisedSandbox::launch(SandboxOptions options) {
  // Forwarded signals are watched from the start: one that comes while the sandbox is built stops the building
  // (the caller finds it still pending); after that the monitor forwards them (held until the first process runs).
  if (!options.forward_signals.empty()) {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : options.forward_signals) sigaddset(&set, sig);
    signals_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signals_) return Status::from_errno(errno, "signalfd(forwarded signals)");
  }
  auto interrupted = [] { return Status::from_errno(EINTR, "sandbox set-up stopped by a forwarded signal"); };
  if (forwarded_signal_pending()) return interrupted();
  // Before the sandbox can write anything: what is written from here on was written during the run.
  start_repo_guard();
  if (!options.init.valid()) {
    auto cloned = InitProcess::clone();
    if (!cloned.is_ok()) return cloned.status();
    options.init = std::move(cloned.value());
  }
  UniqueFd userns;
  init_start_ = options.init.start_note();
  init_born_ = options.init.born_in_cgroup();
  BirthCgroup birth;
  options.init.release(&init_pid_, &init_pidfd_, &control_, &userns, &birth);
  janitor_ = std::move(birth.janitor);
  init_group_ = std::move(birth.group);
  control::ControlMessage spec_message{control::Kind::spec};
  spec_message.data = encode_init_spec(spec_);
  std::vector<UniqueFd> idmapped;  // a root caller's binds (runtime/outside/idmapped_binds.h), sent with `spec`
  if (userns) {
    auto trees = prepare_root_caller_binds(spec_, userns.get());
    if (!trees.is_ok()) return trees.status();
    idmapped = std::move(trees.value());
    root_caller_ = true;
  }
  std::vector<int> idmapped_fds;
  for (const auto& tree : idmapped) idmapped_fds.push_back(tree.get());
  spec_message.number = static_cast<int>(idmapped_fds.size());
  if (Status sent = send(spec_message, idmapped_fds); !sent.is_ok()) {
    return init_failure_or(sent.with_context("sending the policy"));
  }
  idmapped.clear();
  trace_startup("supervisor: policy sent");
  protect_.snapshot(spec_.protected_paths);
  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  exits_ready_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_ || !exits_ready_) return Status::from_errno(errno, "eventfd");

  // Init now maps its ids and builds its mount tree; the supervisor does its own share meanwhile.
  std::unique_ptr<relay::Relay> relay;
  if (Status status = prepare_beside_init(options, &relay); !status.is_ok()) return init_failure_or(std::move(status));
  if (forwarded_signal_pending()) return interrupted();  // before the command is even queued
  if (options.first_process) {
    // Queued behind `joined`: init starts it as soon as it is sealed, without waiting for another round trip.
    auto sent = send_spawn(*options.first_process);
    if (!sent.is_ok()) return init_failure_or(sent.status());
    first_process_id_ = sent->spawned.id;
    first_process_ = std::move(sent.value());
  }

  std::vector<UniqueFd> fds;
  auto listeners_message = receive_setup_message(&fds);
  if (!listeners_message.is_ok()) return listeners_message.status();
  if (listeners_message->kind != control::Kind::listeners || fds.size() != listeners_message->strings.size()) {
    return Status::error("sandbox init: unexpected message instead of the relay listeners");
  }
  std::vector<relay::Listener> listeners;
  std::vector<UniqueFd> dns_udp, dns_tcp;  // the DNS stub's sockets (runtime/broker/dns_stub.h)
  std::vector<UniqueFd> udp_relay;         // the datagram relay's inner sockets (runtime/relay/datagram_relay.h)
  for (size_t i = 0; i < fds.size(); ++i) {
    const std::string& protocol = listeners_message->strings[i];
    if (protocol == "http" || protocol == "socks5") {
      listeners.push_back({std::move(fds[i]), protocol == "http" ? relay::Protocol::http : relay::Protocol::socks5});
    } else if (protocol == "dns-udp" || protocol == "dns-tcp") {
      (protocol == "dns-udp" ? dns_udp : dns_tcp).push_back(std::move(fds[i]));
    } else if (protocol == "udp-relay") {
      udp_relay.push_back(std::move(fds[i]));
    } else if (protocol == "ns-net") {
      sandbox_netns_ = std::move(fds[i]);
    } else if (protocol == "ns-user") {
      sandbox_userns_ = std::move(fds[i]);
    } else if (protocol == "ns-mnt") {
      sandbox_mntns_ = std::move(fds[i]);
    } else if (protocol == "root") {
      sandbox_root_ = std::move(fds[i]);
    } else {
      return Status::error("sandbox init: a listener of unknown protocol `" + protocol + "`");
    }
  }
  fds.clear();
  auto ready = receive_setup_message(&fds);
  if (!ready.is_ok()) return ready.status();
  if (ready->kind != control::Kind::ready) return Status::error("sandbox init: unexpected message instead of ready");
  landlock_abi_ = ready->number;
  // Landlock's missing rules are one layer fewer for guarantees that other layers still hold (the guarantees were
  // checked before init was sent the policy): said apart from what is degraded.
  for (auto& sentence : ready->strings) {
    (sentence.starts_with("landlock: ") ? layers_missing_ : degradations_).push_back(std::move(sentence));
  }
  // With best_effort, a guarantee held by no layer here is what degraded.
  for (const auto& g : guarantees_) {
    if (g.held()) continue;
    std::string why;
    for (const auto& w : g.waived_by) why += (why.empty() ? " (" : "; ") + w;
    degradations_.push_back("guarantee lost: " + g.id + ": " + g.statement + (why.empty() ? "" : why + ")"));
  }
  if (!fds.empty()) notifier_ = std::make_unique<SeccompNotifier>(std::move(fds[0]), std::move(seccomp_reports_), events_);

  notifier_ok_ = notifier_ != nullptr;
  if (notifier_ && spec_.seccomp.observe_paths) {
    path_observer_ = std::make_unique<PathObserver>(notifier_->fd());
    notifier_->set_observer([this](const seccomp_notif& n) { path_observer_->handle(n); });
  }
  if (relay) {
    // Listening from now on; the relay's thread starts when the first connection waits (monitor_step()).
    relay_ = std::move(relay);
    OI_TRY_CTX(relay_->listen(std::move(listeners)), "relay");
    // The DNS stub on the relay's loop: a first query starts the relay's thread as a first connection does.
    OI_TRY(relay_->serve_dns(std::move(dns_udp), std::move(dns_tcp), name_map_));
    OI_TRY(relay_->serve_datagrams(std::move(udp_relay)));  // before the broker, which sends datagrams there
    if (notifier_) OI_TRY_CTX(start_broker(), "connect broker");
  }
  sandbox_root_.reset();  // the broker has what it needed of it; held longer, it would pin the sandbox's root mount
  monitor_on_caller_ = options.monitor_on_caller;
  if (!monitor_on_caller_) monitor_thread_ = std::thread([this] { monitor(); });
  events_.emit({{"event", "start"},
                {"enforced", enforced()},
                {"degraded", degradations_},
                {"layers_missing", layers_missing_}});
  return Status::ok();
}

Status SupervisedSandbox::start_broker() {
  broker::BrokerContext context;
  context.notify_fd = notifier_->fd();
  struct stat netns {};
  if (!sandbox_netns_ || !sandbox_userns_) return Status::error("sandbox init sent no namespace fds");
  if (::fstat(sandbox_netns_.get(), &netns) != 0) return Status::from_errno(errno, "fstat(sandbox netns)");
  context.sandbox_netns = netns.st_ino;
  context.netns_fd = sandbox_netns_.get();
  context.userns_fd = sandbox_userns_.get();
  context.init_pid = init_pid_;
  // The sandbox's own tmpfs: its root, the scratch tmpfs (/tmp, the home, /dev/shm) and /dev, beneath init's root.
  context.root_fd = sandbox_root_.get();
  context.own_tmpfs = {"/", "/dev"};
  for (const auto& step : spec_.mounts) {
    if (step.kind == MountStep::Kind::tmpfs) context.own_tmpfs.push_back(step.target);
  }
  // Landlock (ABI 4+) limits the ports TCP may connect to inside; the broker connects for the sandbox, so it keeps
  // that rule for the sandbox's own loopback.
  context.landlock_tcp = landlock_abi_ >= 4;
  context.loopback_tcp_ports = spec_.landlock.tcp_connect_ports;
  // Unix sockets are resolved and connected as the sandbox, not as this process (runtime/broker/as_sandbox.h):
  // init's credentials are the sandbox's from `ready` on.
  auto ids = broker::sandbox_ids_of(init_pid_);
  if (!ids.is_ok()) return ids.status().with_context("the sandbox's ids");
  auto as_sandbox = broker::AsSandbox::start(*ids);
  if (!as_sandbox.is_ok()) return as_sandbox.status();
  context.as_sandbox = std::move(as_sandbox.value());
  OI_TRY(relay_->start_broker(std::move(context)));
  broker_started_ = true;
  notifier_->set_broker([this](const seccomp_notif& notification) {
    relay_->broker_submit(notification);
    if (!relay_serving_) on_relay_activity();
  });
  return Status::ok();
}

Status SupervisedSandbox::prepare_beside_init(SandboxOptions& options, std::unique_ptr<relay::Relay>* relay) {
  auto program = seccomp_compile(spec_.seccomp);
  if (!program.is_ok()) return program.status();
  // The janitor learns each cgroup before it is made (and starts with the first): killed at any moment from here
  // on, this process leaves no cgroup behind.
  // A group init was born in (or made for it) is the limits' v2 group: memory.max and pids.max are written now,
  // while init builds its mount tree, and init starts nothing before `joined`.
  auto limits = ResourceLimits::prepare(
      spec_.limits, [this](const std::string& dir) { return janitor_.watch(init_pidfd_.get(), dir); },
      cgroup::OwnCgroups::read(), ResourceLimits::PremadeGroup{std::move(init_group_), init_born_});
  if (!limits.is_ok()) return limits.status().with_context("resource limits");
  limits_ = std::move(limits.value());
  if (limits_->cgroup_dirs().empty()) janitor_.release();  // every attempt failed: nothing for it to remove
  // Init starts no process before `joined`, so everything it ever starts is inside the cgroups. (Nothing to move
  // for a group init was born in.)
  OI_TRY_CTX(limits_->add_process(init_pid_), "resource limits");
  control::ControlMessage joined{control::Kind::joined};
  joined.data = seccomp_program_to_bytes(*program);
  joined.number = program->notify ? 1 : 0;
  seccomp_reports_ = std::move(program->reports);
  for (const RlimitSetting& r : limits_->rlimits()) {
    joined.strings.push_back(std::to_string(r.resource) + " " + std::to_string(r.soft) + " " + std::to_string(r.hard));
  }
  OI_TRY(send(joined));
  trace_startup("supervisor: cgroups joined, seccomp program sent");
  {
    // Mode none too: the relay's loop hosts the connect broker (runtime/broker), which has no exit there.
    auto created = relay::Relay::create(spec_.network, events_, std::move(options.ask));
    if (!created.is_ok()) return created.status().with_context("relay");
    *relay = std::move(created.value());
    if (https_) {
      OI_TRY_CTX((*relay)->enable_termination(std::move(https_->authority), std::move(https_->credentials)),
                 "relay");
      https_.reset();
    }
    trace_startup("supervisor: relay created");
  }
  return Status::ok();
}

Status SupervisedSandbox::init_failure_or(Status status) {
  pollfd exited{init_pidfd_.get(), POLLIN, 0};
  if (::poll(&exited, 1, 100) != 1) return status;  // init is still building: the supervisor's error stands
  // Init may have sent set-up messages (the relay listeners, say) before the step that failed: its `fail` message,
  // or its exit, comes after them. Bounded: init sends a handful of set-up messages at most.
  for (int i = 0; i < 8; ++i) {
    std::vector<UniqueFd> fds;
    auto message = receive_setup_message(&fds);
    if (!message.is_ok()) return message.status();
  }
  return status;
}

bool SupervisedSandbox::forwarded_signal_pending() const {
  if (!signals_) return false;
  pollfd pending{signals_.get(), POLLIN, 0};
  return ::poll(&pending, 1, 0) == 1;
}

Result<control::ControlMessage> SupervisedSandbox::receive_setup_message(std::vector<UniqueFd>* fds) {
  // While init builds, a forwarded signal stops the set-up (and stays pending for the caller).
  while (signals_) {
    pollfd ready[2] = {{control_.get(), POLLIN, 0}, {signals_.get(), POLLIN, 0}};
    if (::poll(ready, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return Status::from_errno(errno, "poll(sandbox init)");
    }
    if (ready[1].revents & POLLIN) return Status::from_errno(EINTR, "sandbox set-up stopped by a forwarded signal");
    if (ready[0].revents) break;
  }
  auto message = receive_message(control_.get());
  if (!message.is_ok()) return message.status().with_context("sandbox init");
  if (message->payload.empty()) {
    int status = 0;
    if (::waitpid(init_pid_, &status, 0) == init_pid_) init_pid_ = -1;
    return Status::error("sandbox init exited during set-up (" +
                         (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                              : "status " + std::to_string(WEXITSTATUS(status))) + ")");
  }
  auto decoded = control::decode(message->payload);
  if (!decoded.is_ok()) return decoded.status();
  if (decoded->kind == control::Kind::fail) return Status::error(decoded->step + ": " + decoded->message);
  *fds = std::move(message->fds);
  return decoded;
}

}  // namespace oishell
