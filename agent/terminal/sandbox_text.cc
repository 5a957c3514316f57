#include "agent/terminal/sandbox_text.h"

#include "base/hidden_characters.h"
#include "base/terminal_text.h"

namespace oishell::agent {
namespace {

// How many bytes at the end of `text` are the start of a UTF-8 character that the next piece may complete: a lead
// byte followed by fewer continuation bytes than it announces. Anything else is left to escape_for_terminal.
size_t cut_character(std::string_view text) {
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const auto byte = static_cast<unsigned char>(text[text.size() - back]);
    if (byte >= 0x80 && byte <= 0xbf) continue;  // a continuation byte: the lead is further back
    size_t length = byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3
                                                     : byte >= 0xf0 && byte <= 0xf4 ? 4 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

// With emoji joiners kept: how many bytes before `end` are an emoji sequence the next piece may go on with
// (pictographs, U+FE0F, U+200D), held so that escape_for_terminal sees each joiner between its neighbours. At most
// 64 bytes: a longer run is let go (its joiners at the cut are escaped, which is the safe side).
size_t open_emoji_run(std::string_view text, size_t end) {
  constexpr size_t kMaxHeld = 64;
  size_t start = end;
  while (start > 0 && end - start < kMaxHeld) {
    size_t lead = start - 1;
    while (lead > 0 && (static_cast<unsigned char>(text[lead]) & 0xc0) == 0x80 && start - lead < 4) --lead;
    if (static_cast<unsigned char>(text[lead]) < 0x80) break;
    char32_t cp = 0;
    if (decode_utf8_character(text.substr(lead, start - lead), &cp) != start - lead) break;
    if (!(is_pictographic(cp) || cp == 0xfe0f || cp == 0x200d)) break;
    start = lead;
  }
  return end - start;
}

}  // namespace

std::string ConsoleFilter::feed(std::string_view stream, std::string_view data) {
  return stream == "stderr" ? stderr_.feed(data) : stdout_.feed(data);
}

std::string TextEscaper::feed(std::string_view text, EmojiJoiners joiners) {
  held_.append(text);
  size_t keep = cut_character(held_);
  if (joiners == EmojiJoiners::kept) keep += open_emoji_run(held_, held_.size() - keep);
  std::string out = escape_for_terminal(std::string_view(held_).substr(0, held_.size() - keep), true, joiners);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string TextEscaper::finish(EmojiJoiners joiners) {
  std::string out = escape_for_terminal(held_, true, joiners);
  held_.clear();
  return out;
}

OutputScan scan_output(std::string_view text, bool line_start) {
  OutputScan scan{line_start, TerminalEffect::none};
  auto saw = [&scan](TerminalEffect e) {
    if (e > scan.effect) scan.effect = e;
  };
  enum class State { ground, escape, csi, string, string_escape } state = State::ground;
  bool csi_private = false;
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (state) {
      case State::ground:
        if (c == '\n' || c == '\v' || c == '\f') {
          scan.line_start = true;
        } else if (c == 0x1b) {
          state = State::escape;
        } else if (c == 0x0e || c == 0x0f) {
          saw(TerminalEffect::other);  // SO / SI: another character set
        } else if (c >= 0x20 || c == '\r' || c == '\t' || c == '\b') {
          scan.line_start = false;  // a CR returns over what the line holds: writing there would mix with it
        }
        break;
      case State::escape:
        if (c == '[') {
          state = State::csi;
          csi_private = false;
        } else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
          state = State::string;
          saw(TerminalEffect::other);
        } else if (c < 0x20 || c > 0x2f) {  // the final byte (intermediates 0x20-0x2f keep the sequence going)
          state = State::ground;
          saw(TerminalEffect::other);
        }
        break;
      case State::csi:
        if (c >= 0x3c && c <= 0x3f) csi_private = true;  // < = > ?
        if (c >= 0x40 && c <= 0x7e) {
          state = State::ground;
          bool in_line = !csi_private && (c == 'm' || c == 'G' || c == 'C' || c == 'D' || c == 'K');
          saw(in_line ? TerminalEffect::in_line : TerminalEffect::other);
        }
        break;
      case State::string:
        if (c == 0x07) state = State::ground;
        if (c == 0x1b) state = State::string_escape;
        break;
      case State::string_escape:
        state = c == '\\' ? State::ground : State::string;
        break;
    }
  }
  return scan;
}

}  // namespace oishell::agent
