// `oishell doctor [--json]`: the kernel features this machine gives the sandbox, what each feature of the default
// profile will be here (enforced, degraded (how) or unavailable), and each of its guarantees with the layers that
// hold it here (policy/guarantees.h). Exit 0 when the default profile's sandbox starts here with every guarantee
// held, 1 otherwise. OISHELL_LANDLOCK_ABI caps the Landlock ABI as it does for a sandbox.
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "policy/compile.h"
#include "policy/guarantees.h"
#include "runtime/outside/init_process.h"
#include "runtime/outside/kernel_probe.h"
#include "runtime/outside/layer_facts.h"
#include "runtime/outside/events.h"
#include "runtime/outside/limits.h"
#include "runtime/outside/sandbox.h"
#include "tools/oishell/command.h"
#include "tools/oishell/doctor_assess.h"
#include "tools/oishell/doctor_container.h"
#include "tools/oishell/policy_cli.h"

namespace oishell::cli {
namespace {

constexpr char kUsage[] =
    "usage: oishell doctor [--json]\n"
    "Probes the kernel (user namespaces and what restricts them, Landlock ABI and rights, seccomp and user\n"
    "notification, cgroup v2/v1 controllers and writability, dev.tty.legacy_tiocsti, tun and nftables in a user\n"
    "namespace), says what each feature of the default profile will be here (enforced, degraded or unavailable),\n"
    "and which layers hold each of its guarantees here. OISHELL_LANDLOCK_ABI=N (0-7) shows an older kernel's.\n"
    "Exit 0 when the default profile's sandbox starts here with every guarantee held, 1 when it does not, 2 on a\n"
    "usage error.\n";

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out.empty() ? "none" : out;
}

std::string opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "absent"; }

void print_kernel(const KernelFacts& k) {
  utsname u{};
  ::uname(&u);
  std::printf("oishell doctor: Linux %s (%s), running as uid %u\n\nKernel features\n", u.release, u.machine,
              ::getuid());
  std::printf("  %-22s %s (user.max_user_namespaces=%s, kernel.unprivileged_userns_clone=%s,\n"
              "  %-22s kernel.apparmor_restrict_unprivileged_userns=%s)\n",
              "user namespaces", k.userns_works ? "work" : k.userns_detail.c_str(), opt(k.max_user_namespaces).c_str(),
              opt(k.unprivileged_userns_clone).c_str(), "", opt(k.apparmor_restrict_unprivileged_userns).c_str());
  std::string rights = join(k.landlock_rights);
  std::printf("  %-22s ABI %d\n", "landlock", k.landlock_abi);
  while (!rights.empty()) {  // wrapped at about 90 columns
    size_t cut = rights.size() <= 90 ? rights.size() : rights.rfind(", ", 90) + 2;
    std::string part = rights.substr(0, cut);
    while (!part.empty() && part.back() == ' ') part.pop_back();
    std::printf("  %-22s %s\n", "", part.c_str());
    rights.erase(0, cut);
  }
  std::printf("  %-22s filter: %s; user notification: %s (libseccomp API level %u)\n", "seccomp",
              yes_no(k.seccomp_filter).c_str(), yes_no(k.seccomp_notify).c_str(), k.libseccomp_api);
  if (k.cgroup_v2_dir.empty()) {
    std::printf("  %-22s not mounted\n", "cgroup v2");
  } else {
    std::printf("  %-22s %s: controllers %s; writable: %s\n", "cgroup v2", k.cgroup_v2_dir.c_str(),
                join(k.cgroup_v2_controllers, " ").c_str(), yes_no(k.cgroup_v2_writable).c_str());
  }
  for (const auto& c : k.cgroup_v1) {
    std::printf("  %-22s %s: writable: %s\n", ("cgroup v1 " + c.controller).c_str(), c.dir.c_str(),
                yes_no(c.writable).c_str());
  }
  std::printf("  %-22s dev.tty.legacy_tiocsti=%s%s\n", "TIOCSTI", opt(k.legacy_tiocsti).c_str(),
              k.legacy_tiocsti.value_or(0) == 1 ? " (faking input into one's own terminal is allowed by the kernel)"
                                                : "");
  std::printf("  %-22s %s\n", "tun in a user ns", k.tun_in_userns ? "works" : k.tun_detail.c_str());
  std::printf("  %-22s %s\n", "nftables in a user ns", k.nftables_in_userns ? "works" : k.nftables_detail.c_str());
}

// What the parser reads and `oishell completion` offers.
const std::vector<completion::Option>& options() {
  static const std::vector<completion::Option> options = {
      {{"--json"}, completion::Value::none, "", "print the facts, verdicts and guarantees as JSON", {}}};
  return options;
}

int run_doctor(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (argv[i] == options()[0].names[0]) {
      json = true;
    } else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(kUsage, stdout);
      return kExitOk;
    } else {
      std::fprintf(stderr, "oishell doctor: unknown argument `%s`\n%s", argv[i], kUsage);
      return kExitUsage;
    }
  }
  auto layers = layer_facts();
  if (!layers.is_ok()) {
    std::fprintf(stderr, "oishell doctor: %s\n", layers.status().message().c_str());
    return kExitFailure;
  }
  const KernelFacts& k = kernel_facts();
  // What the default profile enforces does not depend on where doctor runs: it is compiled with an empty directory
  // of its own as the workspace (the current one may be refused as one: the home directory, /tmp).
  char workspace[] = "/tmp/oishell-doctor-XXXXXX";
  if (!::mkdtemp(workspace)) {
    std::fprintf(stderr, "oishell doctor: mkdtemp: %s\n", std::strerror(errno));
    return kExitFailure;
  }
  CompileContext context = CompileContext::from_process();
  context.cwd = workspace;
  auto spec = compile_policy(PolicySource{"", "default"}, PolicyOverrides{}, context);
  if (!spec.is_ok()) {
    ::rmdir(workspace);
    std::fprintf(stderr, "oishell doctor: the default profile does not compile here:\n%s\n",
                 spec.status().message().c_str());
    return kExitFailure;
  }
  std::vector<std::string> mechanisms;
  auto limits = ResourceLimits::prepare(spec->limits);  // made and removed again: the real answer for this user
  if (limits) {
    mechanisms = (*limits)->mechanisms();
    (*limits)->teardown();
  }
  auto verdicts = assess(k, *layers, *spec, mechanisms);
  const bool full = enforced_in_full(verdicts);
  const auto guarantees = assess_guarantees(*spec, *layers);
  const std::string refused = refusal(guarantees);
  // The verdicts are reasoned from probes; a trial start of the default profile's sandbox (built, sealed and torn
  // down, nothing run in it) is the proof, and catches what no probe asks: a container's filter refusing one call
  // of the many the build makes.
  std::string trial_failure;
  // How the trial's init started: born in its cgroup (clone3 CLONE_INTO_CGROUP) or cloned and moved, and why.
  std::string init_start;
  bool init_born = false;
  if (k.userns_works && refused.empty()) {
    NullEventSink quiet;
    SandboxOptions trial_options;
    if (auto init = InitProcess::clone(); init.is_ok()) {
      init_start = init->start_note();
      init_born = init->born_in_cgroup();
      trial_options.init = std::move(init.value());
    }  // else the trial's own clone fails the same way, and says why
    auto trial = Sandbox::create(*spec, quiet, std::move(trial_options));
    if (trial.is_ok()) {
      (*trial)->shutdown();
    } else {
      trial_failure = trial.status().message();
    }
  }
  ::rmdir(workspace);
  const bool starts = k.userns_works && refused.empty() && trial_failure.empty();
  const std::string slow_start = startup_advice(k, mechanisms, init_born);
  const auto container = container_settings(k, host_signals(), container_probe());

  if (json) {
    nlohmann::json features = nlohmann::json::array();
    for (const auto& v : verdicts) {
      features.push_back({{"name", v.name}, {"status", verdict_name(v.verdict)}, {"how", v.how},
                          {"security", v.security}});
    }
    nlohmann::json held = nlohmann::json::array();
    for (const auto& g : guarantees) {
      nlohmann::json by = nlohmann::json::array(), missing = nlohmann::json::array();
      for (const auto& l : g.held_by) by.push_back({{"layer", l.name}, {"how", l.how}});
      for (const auto& m : g.missing) missing.push_back({{"layer", m.name}, {"needs", m.needs}});
      held.push_back({{"id", g.id}, {"statement", g.statement}, {"held", g.held()}, {"held_by", by},
                      {"missing", missing}, {"waived_by", g.waived_by}});
    }
    nlohmann::json kernel = kernel_facts_json(k);
    kernel["landlock"]["in_use"] = layers->landlock_abi;
    kernel["landlock"]["cap"] = layers->landlock_cap ? nlohmann::json(*layers->landlock_cap) : nlohmann::json(nullptr);
    nlohmann::json out = {{"kernel", kernel},
                          {"default_profile",
                           {{"features", features},
                            {"enforced_in_full", full},
                            {"guarantees", held},
                            {"every_guarantee_held", refused.empty()},
                            {"trial_start", trial_failure.empty() ? "ok" : trial_failure},
                            {"starts", starts}}},
                          {"init_start", init_start},
                          {"init_born_in_cgroup", init_born},
                          {"startup_advice", slow_start}};
    if (!container.empty()) {
      nlohmann::json settings = nlohmann::json::array();
      for (const auto& s : container) {
        settings.push_back({{"name", s.name}, {"ok", s.ok}, {"state", s.state}, {"fix", s.fix}});
      }
      out["container"] = settings;
    }
    std::printf("%s\n", out.dump(2).c_str());
    return starts ? kExitOk : kExitFailure;
  }
  print_kernel(k);
  if (!container.empty()) {
    std::printf("\nThis container gives oishell\n");
    for (const auto& s : container) {
      std::printf("  %-5s %-16s %s\n", s.ok ? "ok" : "NEEDS", s.name.c_str(), s.state.c_str());
      if (!s.fix.empty()) std::printf("  %-22s %s: %s\n", "", s.ok ? "set" : "fix", s.fix.c_str());
    }
  }
  std::printf("\nThe default profile on this machine\n");
  for (const auto& v : verdicts) {
    std::printf("  %-11s %-20s %s\n", verdict_name(v.verdict), v.name.c_str(), v.how.c_str());
  }
  std::printf("\nIts guarantees, and the layers that hold them here, with Landlock %s\n",
              describe_landlock(*layers).c_str());
  for (const auto& g : guarantees) {
    std::printf("  %-5s %-13s %s\n", g.held() ? "held" : "LOST", g.id.c_str(), g.statement.c_str());
    for (const auto& l : g.held_by) std::printf("  %-19s by %s: %s\n", "", l.name.c_str(), l.how.c_str());
    for (const auto& m : g.missing) {
      std::printf("  %-19s not by %s (needs %s)\n", "", m.name.c_str(), m.needs.c_str());
    }
  }
  if (!k.userns_works) {
    std::printf("\nNo sandbox can be built here: the namespaces line above says why and what enables them.\n");
  } else if (!refused.empty()) {
    std::printf("\nThe default profile does NOT start here: %s.\n", refused.c_str());
  } else if (!trial_failure.empty()) {
    std::printf("\nThe default profile does NOT start here: a trial start failed: %s\n", trial_failure.c_str());
  } else if (full) {
    std::printf("\nThe default profile is enforced in full.\n");
  } else {
    std::printf("\nEvery guarantee of the default profile holds here; %zu of them by fewer layers than a newer kernel "
                "gives (`not by` above).\n",
                fewer_layers(guarantees).size());
  }
  if (!init_start.empty()) std::printf("\nStart: %s\n", init_start.c_str());
  if (!slow_start.empty()) std::printf("\nStart-up: %s\n", slow_start.c_str());
  return starts ? kExitOk : kExitFailure;
}

const Registration kRegistration{{"doctor", "what this kernel gives the sandbox, and what the default profile gets",
                                  &run_doctor, &options}};

}  // namespace
}  // namespace oishell::cli
