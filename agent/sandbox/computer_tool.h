#pragma once
// The `computer` tool (`interpreter --os`): the model sees the sandbox's virtual display in screenshots and drives
// it with Anthropic's computer-use actions (screenshot, clicks, mouse_move, left_click_drag, type, key, scroll,
// hold_key, wait, cursor_position). Anthropic models get the native tool; OpenAI-compatible ones a plain function
// with the same actions. A call becomes a code block of language "computer" whose content is the action (JSON),
// run by the python executor's `computer` (runtime/executors/drivers/oishell_computer.py) on the virtual display.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace oishell::agent {

// The screen in the model's pixels: the display itself, or scaled down to fit 1280x800 (larger screenshots cost
// tokens and models point less precisely on them), keeping its proportions.
struct ComputerScreen {
  int width = 1024;
  int height = 768;
  bool operator==(const ComputerScreen&) const = default;
};
ComputerScreen model_screen(int display_width, int display_height);
// "1280x800" → {1280, 800}; nullopt unless both sides are 64..8192 (what `oishell supervise --display` takes).
std::optional<ComputerScreen> parse_screen_size(std::string_view text);

inline constexpr const char* kComputerLanguage = "computer";  // the code block's language for an action

// Anthropic's native tool (type computer_20250124) and the beta header that enables it.
nlohmann::json anthropic_computer_tool(const ComputerScreen& screen);
inline constexpr const char* kAnthropicComputerBeta = "anthropic-beta: computer-use-2025-01-24";
// The same actions as a plain function (OpenAI-compatible chat completions): {"type":"function", ...}.
nlohmann::json openai_computer_tool(const ComputerScreen& screen);

// Checks one action against the screen: a known action, the fields it needs with the right types, coordinates on
// the screen, bounded texts and durations. Empty when valid, else what is wrong (told to the model; nothing runs).
std::string computer_action_problem(const nlohmann::json& action, const ComputerScreen& screen);

// The python block that performs a valid action: `computer._tool(<action>, (w, h))`, the action passed as a JSON
// string literal (no part of it is ever python source).
std::string computer_action_python(const nlohmann::json& action, const ComputerScreen& screen);

// One line for the user: "left_click (512, 300)", "type \"hello\"", "key ctrl+s".
std::string describe_computer_action(const nlohmann::json& action);

// The system prompt's section on the computer (Open Interpreter's "THE COMPUTER API", in this agent's words).
// `tool`: the model has the `computer` tool (else it drives the screen from python only, as OI's OS mode does
// for models without tool calls).
std::string computer_prompt_section(const ComputerScreen& screen, bool tool);

}  // namespace oishell::agent
