#pragma once
// What the displays do to text they did not write themselves before it reaches the user's terminal. A block's
// output is chosen by sandboxed code, and so, through what the model reads, can be the model's own text: output
// passes through TerminalOutputFilter in its inline scope (foreground colours and moves within the line pass;
// nothing that moves above the output, clears the screen or the scrollback, recolours the terminal, links, draws
// backgrounds or hides characters does), the model's prose and code through escape_for_terminal (every control and
// hidden character shown as \xNN or \u{...}, so what the user confirms is what they read). Pure: no I/O.
#include <string>
#include <string_view>

#include "base/terminal_filter.h"
#include "base/terminal_text.h"

namespace oishell::agent {

// One TerminalOutputFilter per output stream of a block (a sequence cut between two events of one stream is
// held until it is complete; the other stream's output may come in between).
class ConsoleFilter {
 public:
  [[nodiscard]] std::string feed(std::string_view stream, std::string_view data);
  // The end of the block: what each stream still owes (an unterminated sequence is dropped). Ready for another.
  [[nodiscard]] std::string finish_stdout() { return stdout_.finish(); }
  [[nodiscard]] std::string finish_stderr() { return stderr_.finish(); }

 private:
  TerminalOutputFilter stdout_{TerminalOutputFilter::Scope::kInline}, stderr_{TerminalOutputFilter::Scope::kInline};
};

// escape_for_terminal(text, keep_newlines = true, joiners) over a stream cut anywhere: a UTF-8 character cut at the
// end of a piece is held for the next one instead of being shown as \xNN bytes, and with EmojiJoiners::kept an emoji
// sequence that the next piece may go on with is held too. Prose keeps emoji joiners; code, every one escaped.
class TextEscaper {
 public:
  [[nodiscard]] std::string feed(std::string_view text, EmojiJoiners joiners = EmojiJoiners::escaped);
  [[nodiscard]] std::string finish(EmojiJoiners joiners = EmojiJoiners::escaped);

 private:
  std::string held_;
};

// What filtered output did to the terminal, read from what the filter passed (only whole sequences).
enum class TerminalEffect {
  none,     // text and newlines
  in_line,  // colours (SGR) and moves or erasures within the line (CSI ... G, C, D, K), without a private marker:
            // nothing that lasts but the attributes
  other,    // anything else: moving up or down, modes, scroll regions, character sets (SO, ESC ( 0), titles
};
struct OutputScan {
  bool line_start = false;  // the cursor is at the start of a line afterwards (the last of LF / printable)
  TerminalEffect effect = TerminalEffect::none;
};
// `line_start` is the state before `text`.
[[nodiscard]] OutputScan scan_output(std::string_view text, bool line_start);

// Written when output only coloured text or moved within a line: the attributes back to normal.
inline constexpr std::string_view kResetColours = "\033[0m";
// Written when output did anything else, before the agent asks a question or goes on after a block: the screen and
// the input as the user left them, and the cursor on a fresh last line, so that what the agent writes next is
// legible and the last thing on the screen, and the answer the user types is read as typed. The inline filter
// (base/terminal_filter.h) already keeps most of these from passing; the reset covers every mode and colour a
// terminal keeps, so that it holds whatever passed (and should the filter let more pass one day).
inline constexpr std::string_view kResetTerminal =
    "\033[?2026l"  // synchronized output ended (the terminal would show nothing more until it is)
    "\033[?1049l\033[?1047l\033[?47l"  // the normal screen (leaves an alternate screen a block switched to)
    "\033[!p"      // DECSTR soft reset: attributes, character sets, insert and origin modes, margins, cursor keys
    "\033[r"       // margins: the whole screen (where DECSTR is not known)
    "\033[?69l"    // no left and right margins
    "\033[?6l"     // origin mode off
    "\033[?7h"     // autowrap on (DECSTR turns it off on some terminals)
    "\033[?45l"    // no reverse wraparound (a backspace at the line's start stays on the line)
    "\033[?25h"    // cursor shown
    "\033[4l"      // replace mode (not insert)
    "\033[2l"      // the keyboard unlocked (KAM)
    "\033[12h"     // no local echo (SRM): what the user types is shown once, by the line discipline
    "\033[20l"     // newline mode off: LF is a line feed, Enter sends CR
    "\033(B\017"   // G0 is ASCII and shifted in (no line-drawing characters for letters)
    "\033[0m"      // attributes off (no hidden text, no foreground on the same background)
    "\033]8;;\033\\"  // no open hyperlink (the question would be its text)
    "\033]104\033\\\033]110\033\\\033]111\033\\\033]112\033\\\033]117\033\\\033]119\033\\"  // the palette,
                    // the default foreground, background, cursor and highlight colours as configured
    "\033[?5l"     // normal video
    "\033[?9l\033[?1000l\033[?1001l\033[?1002l\033[?1003l\033[?1005l\033[?1006l\033[?1015l\033[?1016l"  // no mouse
                    // reports typed into the input
    "\033[?1004l"  // no focus reports typed into the input
    "\033[?2004l"  // no bracketed paste (it would wrap a pasted answer in escape sequences)
    "\033[?1l\033>"  // cursor keys and keypad send what they normally send
    "\033[>4m"     // xterm's modifyOtherKeys off
    "\033[<99u"    // kitty's keyboard protocol: every pushed mode popped (keys send plain text again)
    "\033[9999B"   // the last line of the screen (a block may have moved the cursor up over earlier output)
    // Tab stops every 8 columns, as a terminal starts (TBC, then HTS at columns 9, 17, ... 505; a forward
    // move stops at the margin), from the start of that line.
    "\033[3g\r"
    "\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H"
    "\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H"
    "\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H"
    "\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H"
    "\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H"
    "\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H"
    "\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H"
    "\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H\033[8C\033H"
    "\r\n";        // and a fresh line below it

}  // namespace oishell::agent
