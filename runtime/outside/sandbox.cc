#include "runtime/outside/sandbox.h"

#include "runtime/outside/supervisor.h"

namespace oishell {

Result<std::unique_ptr<Sandbox>> Sandbox::create(const SandboxSpec& spec, EventSink& events, SandboxOptions options) {
  return SupervisedSandbox::start(spec, events, std::move(options));
}

}  // namespace oishell
