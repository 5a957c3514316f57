#pragma once
// The ACP server's JSON-RPC channel is the project's (base/json_rpc.h), shared with `oishell mcp`.
#include "base/json_rpc.h"

namespace oishell::agent::acp {

using rpc::Incoming;
using rpc::RpcChannel;
namespace rpc_error = rpc::error;

}  // namespace oishell::agent::acp
