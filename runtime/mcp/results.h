#pragma once
// What `oishell mcp` answers, built from what the sandbox reported: tool results (content blocks, structured
// content, isError) for run_code and run_command from their output and `done`, for the file tools from
// oishell-fs's answer, and the sentences that name what refused an action and in which layer (the policy's rule
// from the mount plan: policy/path_verdict.h; seccomp's deny set; the relay's rule). Pure.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/sandbox_spec.h"

namespace oishell::mcp {

inline constexpr size_t kMaxResultStream = 1u << 20;  // stdout and stderr kept for a result, each

// What a run_code or run_command call gathered while it ran.
struct RunOutput {
  std::string out;
  std::string err;
  bool truncated = false;
  std::vector<nlohmann::json> images;  // image content blocks
  std::vector<std::string> denials;    // sentences (describe_event)
};

// Appends output to a stream, at most `limit` bytes per stream (kMaxResultStream for what a model reads; more for
// oishell-fs's answer, which is parsed, not shown).
void append_output(RunOutput& run, const std::string& stream, const std::string& data,
                   size_t limit = kMaxResultStream);

// The tools/call result of a run: text (stdout, stderr, the status when not ok, the denials), the images,
// structuredContent (tools.cc's run output schema); isError unless the status is ok.
nlohmann::json run_result(const RunOutput& run, const nlohmann::json& done);

// A result that is an error the model can act on: one text block, isError.
nlohmann::json error_result(const std::string& text);

// A successful result with `structured` as structuredContent and `text` (or its JSON) as the text block.
nlohmann::json structured_result(nlohmann::json structured, std::string text = {});

// A runtime event (denied, net.denied, limit, protected_changed, repo_neutralised, ...) as one sentence naming the
// rule and the layer; "" for events that are not refusals or warnings.
std::string describe_event(const nlohmann::json& event);

// A file tool's failure: oishell-fs's error object with the call, the path and errno, followed by what in the
// sandbox decides that path (`spec`'s mount plan), for `write` or reading.
std::string describe_fs_error(const nlohmann::json& error, const SandboxSpec& spec, bool write);

// `path` as the sandbox sees it: relative paths start at the sandbox's working directory; empty means it.
std::string sandbox_path(const std::string& path, const SandboxSpec& spec);

}  // namespace oishell::mcp
