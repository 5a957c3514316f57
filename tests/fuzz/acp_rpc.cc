// The ACP JSON-RPC channel (agent/acp/rpc_channel.h): newline-delimited messages an editor writes to `interpreter
// --acp`'s stdin, read from a pipe as the agent reads them, each classified as the server does (request,
// notification, or a response delivered to a waiting call).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agent/acp/rpc_channel.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::agent::acp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A memfd stands for the editor's pipe: the channel reads it with read(2) to its end.
  const int fd = ::memfd_create("acp-fuzz", MFD_CLOEXEC);
  if (fd < 0) oishell::fuzz::broken("memfd_create failed");
  size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, data + written, size - written);
    if (n <= 0) oishell::fuzz::broken("write to the memfd failed");
    written += static_cast<size_t>(n);
  }
  (void)::lseek(fd, 0, SEEK_SET);
  const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  {
    RpcChannel channel(fd, null_out);
    while (std::optional<Incoming> incoming = channel.read()) {
      if (!incoming->error.empty()) {
        FUZZ_CHECK(incoming->message.is_null());
        channel.respond_error(nullptr, rpc_error::parse_error, incoming->error);
        continue;
      }
      const nlohmann::json& message = incoming->message;
      FUZZ_CHECK(message.is_object());
      if (message.contains("method")) {
        if (message.contains("id")) channel.respond_error(message["id"], rpc_error::method_not_found, "fuzz");
      } else {
        (void)channel.deliver(message);
      }
    }
  }
  ::close(null_out);
  ::close(fd);
  return 0;
}
