#include "runtime/sandbox.h"

#include "runtime/supervisor.h"

namespace oishell {

Result<std::unique_ptr<Sandbox>> Sandbox::create(const SandboxSpec& spec, EventSink& events, SandboxOptions options) {
  return SupervisedSandbox::start(spec, events, std::move(options));
}

}  // namespace oishell
