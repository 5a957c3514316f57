#pragma once
// TerminalOutputFilter: what a sandboxed program writes to its pseudo-terminal, cut down to what may reach the
// user's real terminal. Full-screen programs (vim, htop, less, coloured test output) keep working; the escape
// sequences that reach beyond the screen (clipboard, files, fonts, reports typed back into the input, passthrough
// to an outer terminal) do not pass.
//
// It is a streaming parser in the shape of the DEC ANSI parser (vt100.net, "A parser for DEC's ANSI-compatible
// video terminals"): ground, escape, escape intermediate, CSI, and the control strings OSC, DCS, SOS, PM, APC. A
// sequence is held back until it is complete and then forwarded whole or dropped whole, so the real terminal only
// ever sees sequences this parser has read to their end and approved, and is back in its ground state after each.
// Chunks may split anything at any byte; the output does not depend on where.
//
// Policy, with the reason for each line:
//  - Printable text passes, and valid UTF-8 passes byte for byte: it is the program's output.
//  - C0 controls: BEL BS HT LF VT FF CR SO SI pass (they move the cursor, ring, or shift between designated
//    character sets: all within the screen). The others are dropped: they have no use in output, and CAN/SUB
//    abort sequences, which is handled here instead. DEL is dropped (terminals ignore it).
//    Inside an escape or CSI sequence, the passing C0 controls are forwarded at once, before the sequence, as a
//    terminal executes them there.
//  - Plain ESC sequences pass when they only act on the screen: ESC 7, 8 (save/restore cursor), c (reset),
//    = and > (keypad modes), D E H M (index, next line, tab set, reverse index), N O (single shifts),
//    n o | } ~ (locking shifts), ESC # 3 4 5 6 8 (line size, alignment test), and the character set designations
//    ESC ( ) * + - . / with an optional second intermediate. Everything else is dropped, notably ESC % (select
//    coding system: ESC % @ leaves UTF-8, after which the continuation byte of valid UTF-8 such as U+00DD (C3 9D)
//    is an 8-bit OSC to the terminal) and ESC SP F/G (the C1 form of the terminal's reports).
//  - CSI sequences pass (cursor, erase, scroll region, SGR colours, modes, mouse and keyboard modes), except:
//      CSI ... t, every one of them: window operations, including the title and icon reports that historically
//        let output inject text into the input;
//      CSI ... * y (DECRQCRA): a checksum of a screen area, which reads back what the host had on the screen;
//      CSI ... i without intermediates (media copy): sends the screen or the output to a printer;
//      CSI ? ... l resetting mode 2 (DECANM): VT52 mode, whose sequences this parser does not read.
//    A CSI longer than kMaxCsiBytes (from its ESC to its final byte) is dropped whole, and so is one whose bytes
//    are out of order (a private marker after the first parameter byte, a parameter after an intermediate).
//  - OSC passes only for 0 1 2 (titles: no report of them passes), 4 10 11 12 17 19 and 104 110 111 112 117 119
//    (colours and their resets; their reports are fixed-format), 7 (working directory), 8 (hyperlinks) and 133
//    (shell integration marks). The number must be written exactly so (no leading zeros, no sign), because
//    terminals read "052" or an overflowing number as 52. Everything else is dropped whole, notably 52 (clipboard
//    read and write), 50 (font), 1337 (iTerm2, including file transfer), 5113 and 5522 (kitty file transfer and
//    clipboard), and anything whose number does not parse. An allowed OSC is held until its terminator and
//    forwarded with BEL or ESC \ as it was ended (an 8-bit ST becomes ESC \); one longer than kMaxOscBytes is
//    dropped whole, and so is one with a C0 control, DEL or invalid UTF-8 in its payload.
//  - DCS, SOS, PM and APC are always dropped whole: DCS carries tmux passthrough (which would smuggle any sequence
//    to an outer terminal), DECRQSS (which echoes its argument into the input), Sixel and ReGIS; APC carries kitty
//    graphics, which can make the terminal read files on the host.
//  - Control strings end at ST (ESC \, 0x9c, U+009C) and an OSC also at BEL. CAN (0x18) and SUB (0x1a) abort any
//    sequence or string. ESC inside a string followed by anything but '\' aborts the string, and the ESC starts a
//    new sequence. A C1 control other than ST inside a string or sequence aborts it and is read afresh.
//  - C1 controls are never passed, neither as raw bytes 0x80-0x9f outside valid UTF-8 nor as UTF-8 encoded
//    U+0080..U+009F: the terminal may read either. The introducers among them (0x9b CSI, 0x9d OSC, 0x90 DCS,
//    0x98 SOS, 0x9e PM, 0x9f APC, 0x9c ST) are parsed exactly like their 7-bit ESC forms, so an 8-bit OSC 52 is
//    dropped like a 7-bit one; an allowed 8-bit CSI or OSC is forwarded in its 7-bit form. The other C1 controls
//    are dropped.
//  - Invalid UTF-8 outside sequences is forwarded as U+FFFD, one per maximal invalid subpart (as terminals show
//    it), so the output is always valid UTF-8.
//  - Memory is bounded whatever the input: at most kMaxOscBytes of a held sequence and 3 bytes of a cut UTF-8
//    character. A dropped string is skipped, not held.
//
// Scope::kInline narrows this for output shown in line with someone else's text (the agent's code, questions and
// warnings, agent/terminal/sandbox_text.h): the output may colour and rewrite its own lines, and nothing else.
// Its cursor never goes above the line it is on, so it cannot redraw or erase what was printed before it; it
// cannot leave the screen in a state a reset does not undo, hide text outside itself, or draw cells with a
// background, which is what the agent's own marks are made of. The choice is to drop, not to translate: a block
// that needs a full screen is not shown in line. On top of the rules above:
//  - Every OSC is dropped: titles (0 1 2), colours and the palette (4 10 11 12 17 19 and their resets: a block
//    made the text the colour of the background, and no SGR reset restores a palette), hyperlinks (8: an
//    unclosed one turns the agent's question into a link), 7 and 133.
//  - Plain ESC: only the character sets (designations, SS2 SS3, the locking shifts, which the reset undoes), the
//    keypad modes, IND and NEL (down). Dropped: DECSC/DECRC (a saved position can be above; the soft reset moves
//    it to the top left), RIS (clears the screen), HTS (tab stops), RI (up), ESC # (DECALN fills the screen).
//  - CSI passes only without intermediates, and only: SGR, rewritten to its foreground attributes (below); moves
//    within the line or down (C D G ` a B E I Z); erasing, inserting and deleting within the line (K X P @); ED
//    0 (from the cursor to the end of the screen: the cursor is never above the output's own lines); and
//    showing or hiding the cursor (CSI ? 25 h/l). Dropped, notably: CUU and CPL (up), CUP/HVP and VPA (anywhere),
//    ED 1/2/3 (the screen above, and the scrollback), scroll regions and scrolling (r S T), inserting and
//    deleting lines, every mode (insert, newline, local echo, alternate screen, synchronized output, mouse,
//    bracketed paste...), DECSCUSR, DECSTR, tab stop clears, and every report request (n c x and the rest).
//  - SGR keeps: reset, bold, dim, italic, underline (with its style), blink, crossed out, overline, their
//    resets, foreground colours (30-37, 38 in every form, 39, 90-97) and the default background (49). It loses:
//    reverse video (7) and hidden text (8), background colours (40-47, 48, 100-107), underline colours (58),
//    fonts and the rarer attributes. An SGR left with nothing is dropped; one whose extended colour is cut short
//    is dropped whole.
//  - The hidden characters of base/hidden_characters.h (zero-width, bidi controls, fillers, variation selectors,
//    tags) are shown as "<U+200B>" (the code point in at least four upper-case hex digits) instead, except an
//    emoji's own (joins_emoji: U+FE0F after a pictograph, U+200D between two): output is read, never run, and
//    "👩‍💻" keeps its look. A U+200D after a pictograph is held until the next character decides.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace oishell {

class TerminalOutputFilter {
 public:
  // Where the output is shown (see above).
  enum class Scope {
    kScreen,  // on a terminal of its own (oishell's relay): full-screen programs work
    kInline,  // in line with the agent's own lines: nothing that reaches outside the output's lines
  };
  explicit TerminalOutputFilter(Scope scope = Scope::kScreen) : scope_(scope) {}

  // The longest CSI forwarded, counted in its 7-bit form from ESC to the final byte. Real ones are a few dozen.
  static constexpr size_t kMaxCsiBytes = 256;
  // The longest OSC forwarded, counted from ESC to the end of the payload (without the terminator). Titles and
  // hyperlinks fit with room to spare.
  static constexpr size_t kMaxOscBytes = 64 * 1024;

  // The part of the stream, up to the end of `chunk`, that may be written to the real terminal now. An incomplete
  // sequence or UTF-8 character at the end of `chunk` is held until the next call.
  [[nodiscard]] std::string feed(std::string_view chunk);
  // End of the stream: what is still owed (U+FFFD for a cut UTF-8 character); an unterminated sequence is dropped.
  // The filter is back in its initial state afterwards.
  [[nodiscard]] std::string finish();
  // Bytes held back for an incomplete sequence or character, or a joiner (never more than kMaxOscBytes + 3).
  [[nodiscard]] size_t pending_bytes() const { return sequence_.size() + utf8_length_ + (joiner_held_ ? 3 : 0); }

 private:
  // One input unit, after UTF-8 decoding.
  struct Unit {
    enum class Kind {
      kAscii,    // `code` is 0x00-0x7f
      kC1,       // `code` is 0x80-0x9f: a raw byte outside UTF-8, or a decoded U+0080..U+009F
      kText,     // a valid UTF-8 character at or above U+00A0; its bytes are in `text`
      kInvalid,  // a maximal invalid UTF-8 subpart
    };
    Kind kind;
    unsigned char code = 0;
    std::string_view text;
    char32_t code_point = 0;  // of kText
  };
  enum class State {
    kGround,
    kEscape,              // after ESC
    kEscapeIntermediate,  // after ESC and 0x20-0x2f
    kCsi,                 // after CSI, through parameters and intermediates
    kString,              // in OSC, DCS, SOS, PM or APC
    kStringEscape,        // after ESC in a string: ST if '\' follows
  };

  void take_byte(unsigned char byte);
  void step(const Unit& unit);
  void ground(const Unit& unit);
  void escape(const Unit& unit);
  void csi(const Unit& unit);
  void control_string(const Unit& unit);
  void control_string_escape(const Unit& unit);

  // Text in the inline scope: hidden characters marked, an emoji's joiners kept.
  void inline_text(const Unit& unit);
  // A held U+200D, passed when `next` is a pictograph, marked otherwise.
  void settle_joiner(char32_t next);

  // A C0 control met inside an escape or CSI sequence: true when it was handled (ESC, CAN, SUB, DEL, or executed).
  bool sequence_control(unsigned char code);
  void start_escape();
  void start_csi();
  void start_osc();
  void start_ignored_string();  // DCS, SOS, PM, APC
  void end_string(std::string_view terminator);
  void to_ground();
  // Appends to the held sequence, or drops the sequence when that would make it longer than `limit`.
  void hold(std::string_view bytes, size_t limit);
  void hold_byte(unsigned char byte, size_t limit);
  // The current sequence will be read to its end and then dropped; nothing more of it is held.
  void drop();

  Scope scope_;
  State state_ = State::kGround;
  std::string sequence_;    // the held sequence in 7-bit form, from ESC; empty once it is known to be dropped
  bool dropped_ = false;    // the current sequence or string is read to its end and then dropped
  bool osc_ = false;        // the current string is an OSC (BEL ends it)
  bool osc_payload_ = false;  // past the OSC's number and its ';'
  std::string out_;
  static constexpr char32_t kZeroWidthJoiner = 0x200d;
  char32_t previous_text_ = 0;   // the inline scope's last character (0 after anything but text)
  bool joiner_held_ = false;     // a U+200D after a pictograph, not yet passed nor marked
  char32_t joiner_previous_ = 0;  // the character before it

  // UTF-8 decoding across chunks.
  unsigned char utf8_[4] = {};
  size_t utf8_length_ = 0;  // bytes of the current character seen
  size_t utf8_needed_ = 0;  // bytes of it still to come
  unsigned char utf8_low_ = 0x80, utf8_high_ = 0xbf;  // the range of the next continuation byte
};

}  // namespace oishell
