#include "agent/core/system_prompt.h"

#include <pwd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include "agent/host/atomic_file.h"

namespace oishell::agent {
namespace {

constexpr const char* kInstructions =
    "You are Open Interpreter, a world-class programmer that can complete any goal by executing code.\n"
    "First, write a plan. Always recap the plan between each code block (you have extreme short-term memory loss, "
    "so recap the plan between each message block to retain it).\n"
    "When you execute code, it is executed on the user's machine, inside a sandbox. You have full permission to "
    "execute any code needed to complete the task, within what the sandbox allows.\n"
    "Code you run in a language keeps its state (variables, working directory) until the session ends.\n"
    "If you want to send data between programming languages, save the data to a file in the working directory.\n"
    "Write messages to the user in Markdown. In general, try to make plans with as few steps as possible. "
    "Never try to do everything in one code block: run something small, print information about it, continue "
    "from there in tiny, informed steps.\n"
    "You are capable of almost any task, but the sandbox may deny some actions (files outside the workspace, "
    "network destinations, some system calls). When something is denied, do not try to work around the sandbox: "
    "say what was denied and suggest what the user could allow.";

std::string os_release_name() {
  auto text = read_file("/etc/os-release", 64 * 1024);
  if (!text) return {};
  size_t at = text->find("PRETTY_NAME=");
  if (at == std::string::npos) return {};
  size_t end = text->find('\n', at);
  std::string v = text->substr(at + 12, end == std::string::npos ? std::string::npos : end - at - 12);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) v = v.substr(1, v.size() - 2);
  return v;
}

// What the model needs to know about a language beyond its name.
const char* language_note(const std::string& language) {
  if (language == "html")
    return "html: the code is a web page; it is saved to oi-html/<n>.html in the working directory for the user to "
           "open in a browser. You get the path it was saved to, not the rendered page.";
  if (language == "java")
    return "java: runs in JShell: top-level statements, expressions, methods and classes keep their state; a block "
           "that only declares classes, one with `public static void main(String[] args)`, runs that main.";
  if (language == "r") return "r: as at R's prompt, the value of each top-level expression that is visible prints.";
  return nullptr;
}

}  // namespace

HostFacts HostFacts::collect() {
  HostFacts f;
  utsname u{};
  std::string kernel;
  if (::uname(&u) == 0) kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::string distro = os_release_name();
  f.os = distro.empty() ? kernel : distro + ", " + kernel;
  char buf[4096];
  if (::getcwd(buf, sizeof buf)) f.cwd = buf;
  const char* shell = std::getenv("SHELL");
  f.shell = shell && *shell ? shell : "/bin/sh";
  if (const passwd* pw = ::getpwuid(::getuid()); pw) f.user = pw->pw_name;
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  char date[64];
  std::strftime(date, sizeof date, "%A, %d %B %Y", &tm);
  f.date = date;
  return f;
}

std::string_view default_instructions() { return kInstructions; }

std::string build_system_prompt(const PromptInputs& in) {
  std::string p = in.system_message.empty() ? kInstructions : in.system_message;
  p += "\n\n";
  if (in.tools && !in.execute_tool) {
    p += "Work with the tools you are given.";
  } else if (in.tools) {
    p += "To run code, call the `execute` function with `language` and `code`.";
  } else {
    p += "To run code, write it in a markdown code block tagged with its language, e.g. ```python ... ``` or "
         "```shell ... ```; it runs when your message ends and you will see its output. One block at a time.";
  }
  std::string langs;
  for (const auto& l : in.languages) langs += (langs.empty() ? "" : ", ") + l;
  p += "\n\n# The user's system\n";
  p += "- Operating system: " + in.facts.os + "\n";
  p += "- Working directory (also the sandbox's workspace): " + in.facts.cwd + "\n";
  p += "- User's shell: " + in.facts.shell + "\n";
  if (!in.facts.user.empty()) p += "- User: " + in.facts.user + "\n";
  p += "- Languages you can run: " + (langs.empty() ? std::string("python, shell") : langs) + "\n";
  for (const auto& l : in.languages) {
    if (const char* note = language_note(l)) p += std::string("  - ") + note + "\n";
  }
  p += "- Date: " + in.facts.date + "\n";
  p += "\n# The sandbox\n" + in.sandbox_description + "\n";
  if (!in.policy_summary.empty()) p += in.policy_summary + (in.policy_summary.back() == '\n' ? "" : "\n");
  if (!in.custom_instructions.empty()) p += "\n# Custom instructions\n" + in.custom_instructions + "\n";
  return p;
}

}  // namespace oishell::agent
