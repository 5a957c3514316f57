#include "agent/sandbox/computer_tool.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "agent/core/json_util.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

constexpr size_t kMaxText = 10'000;     // characters typed or keys named in one action
constexpr double kMaxDuration = 100.0;  // seconds a wait or hold_key may take

constexpr std::array<std::string_view, 5> kClicks = {"left_click", "right_click", "middle_click", "double_click",
                                                    "triple_click"};

bool one_of(std::string_view value, auto const& list) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string check_point(const json& action, const char* key, const ComputerScreen& screen, bool required) {
  auto it = action.find(key);
  if (it == action.end() || it->is_null()) return required ? std::string("`") + key + "` is required" : "";
  if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number() || !(*it)[1].is_number()) {
    return std::string("`") + key + "` must be [x, y]";
  }
  double x = (*it)[0].get<double>(), y = (*it)[1].get<double>();
  if (x < 0 || y < 0 || x >= screen.width || y >= screen.height) {
    return std::string("`") + key + "` is off the screen (" + std::to_string(screen.width) + "x" +
           std::to_string(screen.height) + ")";
  }
  return "";
}

std::string check_text(const json& action, bool required) {
  auto it = action.find("text");
  if (it == action.end() || it->is_null()) return required ? "`text` is required" : "";
  if (!it->is_string()) return "`text` must be a string";
  if (it->get_ref<const std::string&>().size() > kMaxText) return "`text` is longer than 10000 characters";
  if (required && it->get_ref<const std::string&>().empty()) return "`text` is empty";
  return "";
}

std::string check_duration(const json& action) {
  auto it = action.find("duration");
  if (it == action.end() || it->is_null()) return "";
  if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > kMaxDuration) {
    return "`duration` must be a number of seconds, 0..100";
  }
  return "";
}

std::string point_text(const json& p) {
  auto num = [](const json& v) { return std::to_string(static_cast<long>(v.get<double>())); };
  return "(" + num(p[0]) + ", " + num(p[1]) + ")";
}

json action_properties() {
  return {{"action",
           {{"type", "string"},
            {"enum", {"screenshot", "left_click", "right_click", "middle_click", "double_click", "triple_click",
                      "mouse_move", "left_click_drag", "left_mouse_down", "left_mouse_up", "type", "key", "scroll",
                      "hold_key", "wait", "cursor_position"}},
            {"description", "What to do. Every action but screenshot and cursor_position answers with a screenshot "
                            "taken after it."}}},
          {"coordinate",
           {{"type", "array"}, {"items", {{"type", "integer"}}}, {"minItems", 2}, {"maxItems", 2},
            {"description", "[x, y] in screenshot pixels: where to click, move, scroll or end a drag"}}},
          {"start_coordinate",
           {{"type", "array"}, {"items", {{"type", "integer"}}}, {"minItems", 2}, {"maxItems", 2},
            {"description", "left_click_drag: where the drag starts"}}},
          {"text",
           {{"type", "string"},
            {"description", "type: the text; key and hold_key: xdotool key names (\"Return\", \"ctrl+s\"); clicks "
                            "and scroll: modifier keys to hold"}}},
          {"scroll_direction", {{"type", "string"}, {"enum", {"up", "down", "left", "right"}}}},
          {"scroll_amount", {{"type", "integer"}, {"minimum", 1}, {"maximum", 50}}},
          {"duration", {{"type", "number"}, {"description", "wait and hold_key: seconds (at most 100)"}}}};
}

}  // namespace

ComputerScreen model_screen(int display_width, int display_height) {
  double scale = std::min({1.0, 1280.0 / display_width, 800.0 / display_height});
  if (scale >= 1.0) return {display_width, display_height};
  return {std::max(1, static_cast<int>(display_width * scale)), std::max(1, static_cast<int>(display_height * scale))};
}

std::optional<ComputerScreen> parse_screen_size(std::string_view text) {
  size_t x = text.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  auto side = [](std::string_view digits) -> int {
    if (digits.empty() || digits.size() > 4 || digits[0] == '0') return -1;
    int value = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return -1;
      value = value * 10 + (c - '0');
    }
    return value >= 64 && value <= 8192 ? value : -1;
  };
  int width = side(text.substr(0, x)), height = side(text.substr(x + 1));
  if (width < 0 || height < 0) return std::nullopt;
  return ComputerScreen{width, height};
}

json anthropic_computer_tool(const ComputerScreen& screen) {
  return {{"type", "computer_20250124"},
          {"name", "computer"},
          {"display_width_px", screen.width},
          {"display_height_px", screen.height}};
}

json openai_computer_tool(const ComputerScreen& screen) {
  std::string description =
      "Sees and drives the screen of a virtual display inside the sandbox (" + std::to_string(screen.width) + "x" +
      std::to_string(screen.height) + " pixels): take a screenshot, move and click the mouse, drag, scroll, type "
      "text and press keys. Coordinates are screenshot pixels, origin at the top left.";
  return {{"type", "function"},
          {"function",
           {{"name", "computer"},
            {"description", description},
            {"parameters", {{"type", "object"}, {"properties", action_properties()}, {"required", {"action"}}}}}}};
}

std::string computer_action_problem(const json& action, const ComputerScreen& screen) {
  if (!action.is_object()) return "the computer action must be a JSON object";
  auto it = action.find("action");
  if (it == action.end() || !it->is_string()) return "`action` is required (a string)";
  const std::string& name = it->get_ref<const std::string&>();
  std::string problem;
  if (one_of(name, kClicks) || name == "scroll") {
    problem = check_point(action, "coordinate", screen, false);
    if (problem.empty()) problem = check_text(action, false);
    if (problem.empty() && name == "scroll") {
      auto dir = action.find("scroll_direction");
      if (dir != action.end() && !(dir->is_string() && one_of(dir->get<std::string>(),
                                                              std::array<std::string_view, 4>{"up", "down", "left",
                                                                                              "right"}))) {
        problem = "`scroll_direction` must be up, down, left or right";
      }
      auto amount = action.find("scroll_amount");
      if (problem.empty() && amount != action.end() &&
          !(amount->is_number_integer() && amount->get<long>() >= 1 && amount->get<long>() <= 50)) {
        problem = "`scroll_amount` must be an integer 1..50";
      }
    }
  } else if (name == "mouse_move") {
    problem = check_point(action, "coordinate", screen, true);
  } else if (name == "left_click_drag") {
    problem = check_point(action, "coordinate", screen, true);
    if (problem.empty()) problem = check_point(action, "start_coordinate", screen, false);
  } else if (name == "type" || name == "key") {
    problem = check_text(action, true);
  } else if (name == "hold_key") {
    problem = check_text(action, true);
    if (problem.empty()) problem = check_duration(action);
  } else if (name == "wait") {
    problem = check_duration(action);
  } else if (name == "screenshot" || name == "cursor_position" || name == "left_mouse_down" ||
             name == "left_mouse_up") {
    problem = "";
  } else {
    return "unknown computer action `" + name + "`";
  }
  return problem.empty() ? "" : name + ": " + problem;
}

std::string computer_action_python(const json& action, const ComputerScreen& screen) {
  // A JSON string literal is a valid python string literal: the action never becomes source.
  return "computer._tool(__import__('json').loads(" + json(dump_json(action)).dump() + "), (" +
         std::to_string(screen.width) + ", " + std::to_string(screen.height) + "))\n";
}

std::string describe_computer_action(const json& action) {
  if (!action.is_object() || !action.contains("action") || !action["action"].is_string()) return "(unreadable)";
  std::string out = action["action"].get<std::string>();
  auto has = [&action](const char* key) { return action.contains(key) && !action[key].is_null(); };
  if (has("start_coordinate") && action["start_coordinate"].is_array() && action["start_coordinate"].size() == 2) {
    out += " from " + point_text(action["start_coordinate"]);
  }
  if (has("coordinate") && action["coordinate"].is_array() && action["coordinate"].size() == 2 &&
      action["coordinate"][0].is_number() && action["coordinate"][1].is_number()) {
    out += (has("start_coordinate") ? " to " : " ") + point_text(action["coordinate"]);
  }
  if (has("scroll_direction") && action["scroll_direction"].is_string()) {
    out += " " + action["scroll_direction"].get<std::string>();
  }
  if (has("text") && action["text"].is_string()) {
    const std::string& text = action["text"].get_ref<const std::string&>();
    out += out.starts_with("type") ? " " + json(text.size() > 80 ? text.substr(0, 80) + "..." : text).dump()
                                   : " " + text;
  }
  if (has("duration") && action["duration"].is_number()) out += " " + action["duration"].dump() + " s";
  return out;
}

std::string computer_prompt_section(const ComputerScreen& screen, bool tool) {
  std::string how = tool ? "Use the `computer` tool to see it (action `screenshot`) and to drive it (clicks, typing, "
                           "keys, scrolling); every action answers with a fresh screenshot. "
                         : "See it with computer.display.view() in python (the screenshot is shown to you) and "
                           "drive it with the python API below. ";
  return "# THE COMPUTER\n"
         "You have a computer: a virtual screen of " + std::to_string(screen.width) + "x" +
         std::to_string(screen.height) + " pixels inside the sandbox, the only screen your code can see. " + how +
         "Start graphical programs from code (for example with "
         "`subprocess.Popen([...])` in python, or `program &` in the shell); they appear on this screen.\n"
         "In python, a `computer` object is already imported, with Open Interpreter's API on this screen: "
         "computer.display.view(), computer.display.size(), computer.mouse.click(x, y), computer.mouse.move(x, y), "
         "computer.mouse.scroll(clicks), computer.keyboard.write(text), computer.keyboard.hotkey('ctrl', 's'), "
         "computer.keyboard.press('enter'), computer.clipboard.view(), computer.files.edit(path, old, new). "
         "Coordinates there are the screen's own pixels.\n";
}

}  // namespace oishell::agent
