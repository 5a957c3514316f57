#include "agent/user/magic_export.h"

#include <algorithm>

namespace oishell::agent {
namespace {

using nlohmann::json;

std::string quoted(const std::string& text) {
  std::string out = "> ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "> ";
  }
  return out;
}

// A fence longer than any run of backticks in `text`, so the block cannot be closed from inside.
std::string fence_for(const std::string& text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string mime_of(const std::string& format) {  // "base64.png" -> "image/png"
  auto dot = format.rfind('.');
  std::string ext = dot == std::string::npos ? format : format.substr(dot + 1);
  if (ext == "jpg") ext = "jpeg";
  return "image/" + ext;
}

}  // namespace

json notebook_from_messages(const std::vector<Message>& messages) {
  json cells = json::array();
  json* last_code = nullptr;
  size_t id = 0;
  auto cell = [&id](const char* type, const std::string& source) {
    json c = {{"cell_type", type}, {"id", "cell-" + std::to_string(++id)}, {"metadata", json::object()},
              {"source", source}};
    if (std::string(type) == "code") {
      c["outputs"] = json::array();
      c["execution_count"] = nullptr;
    }
    return c;
  };
  for (const auto& m : messages) {
    if (m.type == "message" && (m.role == "user" || m.role == "assistant")) {
      cells.push_back(cell("markdown", m.role == "user" ? quoted(m.content) : m.content));
      last_code = nullptr;
    } else if (m.type == "code") {
      json c = cell("code", m.content);
      c["metadata"]["language"] = m.format.empty() ? "python" : m.format;
      cells.push_back(std::move(c));
      last_code = &cells.back();
    } else if (m.type == "console" && last_code) {
      (*last_code)["outputs"].push_back({{"output_type", "stream"}, {"name", "stdout"}, {"text", m.content}});
    } else if (m.type == "image" && last_code) {
      (*last_code)["outputs"].push_back({{"output_type", "display_data"},
                                         {"data", {{mime_of(m.format), m.content}}},
                                         {"metadata", json::object()}});
    }
  }
  return {{"cells", cells},
          {"metadata",
           {{"kernelspec", {{"display_name", "Python 3"}, {"language", "python"}, {"name", "python3"}}},
            {"language_info", {{"name", "python"}}}}},
          {"nbformat", 4},
          {"nbformat_minor", 5}};
}

std::string markdown_from_messages(const std::vector<Message>& messages) {
  std::string out;
  std::string last_role;
  for (const auto& m : messages) {
    if (m.type == "message") {
      std::string heading = m.role == "user" ? "## User" : "## Assistant";
      if (m.role != last_role) out += heading + "\n\n";
      out += m.content + "\n\n";
      last_role = m.role;
    } else if (m.type == "code") {
      if (last_role != "assistant") out += "## Assistant\n\n";
      std::string fence = fence_for(m.content);
      out += fence + m.format + "\n" + m.content + (m.content.ends_with('\n') ? "" : "\n") + fence + "\n\n";
      last_role = "assistant";
    } else if (m.type == "console") {
      std::string fence = fence_for(m.content);
      out += "Output:\n\n" + fence + "\n" + m.content + (m.content.ends_with('\n') ? "" : "\n") + fence + "\n\n";
    } else if (m.type == "image") {
      out += "*(an image: " + m.format + ")*\n\n";
    }
  }
  while (out.ends_with("\n\n")) out.pop_back();
  return out;
}

}  // namespace oishell::agent
