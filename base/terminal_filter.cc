#include "base/terminal_filter.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

#include "base/hidden_characters.h"
#include "base/terminal_sequences.h"

namespace oishell {
namespace {

using terminal_sequences::csi_allowed;
using terminal_sequences::escape_allowed;
using terminal_sequences::inline_csi;
using terminal_sequences::is_intermediate;
using terminal_sequences::osc_number_allowed;

constexpr unsigned char kBel = 0x07;
constexpr unsigned char kCan = 0x18;
constexpr unsigned char kSub = 0x1a;
constexpr unsigned char kEsc = 0x1b;
constexpr unsigned char kDel = 0x7f;
// The 8-bit introducers, read like ESC P, ESC X, ESC [, ESC \, ESC ], ESC ^ and ESC _.
constexpr unsigned char kC1Dcs = 0x90;
constexpr unsigned char kC1Sos = 0x98;
constexpr unsigned char kC1Csi = 0x9b;
constexpr unsigned char kC1St = 0x9c;
constexpr unsigned char kC1Osc = 0x9d;
constexpr unsigned char kC1Pm = 0x9e;
constexpr unsigned char kC1Apc = 0x9f;

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD
constexpr std::string_view kSt = "\x1b\\";
constexpr std::string_view kBelText = "\a";

// ESC with at most this many intermediates is read; real ones have one or two.
constexpr size_t kMaxEscapeBytes = 1 + 3;
// The longest allowed OSC number ("133").
constexpr size_t kMaxOscNumberDigits = 3;
// A held sequence's storage is given back at its end when it grew past this (a long title or hyperlink).
constexpr size_t kKeepCapacity = 4096;

// BEL BS HT LF VT FF CR SO SI.
bool c0_passes(unsigned char code) { return code >= 0x07 && code <= 0x0f; }

// "<U+200B>": a hidden character made visible.
void append_mark(std::string& out, char32_t cp) {
  static constexpr char kHexUpper[] = "0123456789ABCDEF";
  out += "<U+";
  int shift = 20;
  while (shift > 12 && (cp >> shift) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) out.push_back(kHexUpper[(cp >> shift) & 0xf]);
  out.push_back('>');
}

}  // namespace

std::string TerminalOutputFilter::feed(std::string_view chunk) {
  out_.reserve(chunk.size());
  for (size_t i = 0; i < chunk.size();) {
    if (state_ == State::kGround && utf8_needed_ == 0) {
      // A run of printable ASCII, the common case, is forwarded as it is, without a step per byte.
      size_t end = i;
      while (end < chunk.size() && static_cast<unsigned char>(chunk[end] - 0x20) < 0x5f) ++end;
      if (end > i) {
        settle_joiner(0);  // text that is not a pictograph: a held joiner joins nothing
        previous_text_ = 0;
        out_.append(chunk.substr(i, end - i));
        i = end;
        continue;
      }
    }
    take_byte(static_cast<unsigned char>(chunk[i++]));
  }
  return std::exchange(out_, {});
}

std::string TerminalOutputFilter::finish() {
  if (utf8_needed_ > 0) {
    utf8_needed_ = utf8_length_ = 0;
    utf8_low_ = 0x80;
    utf8_high_ = 0xbf;
    step({Unit::Kind::kInvalid});
  }
  settle_joiner(0);
  previous_text_ = 0;
  to_ground();
  std::string().swap(sequence_);
  return std::exchange(out_, {});
}

// UTF-8 decoding, in the byte ranges of Unicode's table 3-7 (no overlong forms, surrogates or code points above
// U+10FFFF). A byte that cannot continue the current character ends it as invalid and is then read afresh.
void TerminalOutputFilter::take_byte(unsigned char byte) {
  if (utf8_needed_ > 0) {
    if (byte >= utf8_low_ && byte <= utf8_high_) {
      utf8_[utf8_length_++] = byte;
      utf8_low_ = 0x80;
      utf8_high_ = 0xbf;
      if (--utf8_needed_ > 0) return;
      const size_t length = std::exchange(utf8_length_, 0);
      char32_t cp = utf8_[0] & (0xff >> (length + 1));
      for (size_t i = 1; i < length; ++i) cp = (cp << 6) | (utf8_[i] & 0x3f);
      if (cp < 0xa0) {
        step({Unit::Kind::kC1, static_cast<unsigned char>(cp)});  // U+0080..U+009F, from C2 80..C2 9F
      } else {
        step({Unit::Kind::kText, 0, std::string_view(reinterpret_cast<const char*>(utf8_), length), cp});
      }
      return;
    }
    utf8_needed_ = utf8_length_ = 0;
    utf8_low_ = 0x80;
    utf8_high_ = 0xbf;
    step({Unit::Kind::kInvalid});
  }
  if (byte < 0x80) {
    step({Unit::Kind::kAscii, byte});
    return;
  }
  if (byte < 0xa0) {
    step({Unit::Kind::kC1, byte});  // a raw C1 control: the terminal may read it as one
    return;
  }
  if (byte < 0xc2 || byte > 0xf4) {
    step({Unit::Kind::kInvalid});  // a stray continuation byte, an overlong lead (C0, C1) or F5..FF
    return;
  }
  utf8_[0] = byte;
  utf8_length_ = 1;
  if (byte < 0xe0) {
    utf8_needed_ = 1;
  } else if (byte < 0xf0) {
    utf8_needed_ = 2;
    if (byte == 0xe0) utf8_low_ = 0xa0;   // overlong below U+0800
    if (byte == 0xed) utf8_high_ = 0x9f;  // surrogates
  } else {
    utf8_needed_ = 3;
    if (byte == 0xf0) utf8_low_ = 0x90;   // overlong below U+10000
    if (byte == 0xf4) utf8_high_ = 0x8f;  // above U+10FFFF
  }
}

void TerminalOutputFilter::step(const Unit& unit) {
  if (scope_ == Scope::kInline && !(state_ == State::kGround && unit.kind == Unit::Kind::kText)) {
    settle_joiner(0);  // anything but text: a held joiner joins nothing
    previous_text_ = 0;
  }
  switch (state_) {
    case State::kGround:
      ground(unit);
      return;
    case State::kEscape:
    case State::kEscapeIntermediate:
      escape(unit);
      return;
    case State::kCsi:
      csi(unit);
      return;
    case State::kString:
      control_string(unit);
      return;
    case State::kStringEscape:
      control_string_escape(unit);
      return;
  }
}

void TerminalOutputFilter::ground(const Unit& unit) {
  switch (unit.kind) {
    case Unit::Kind::kAscii:
      if (unit.code == kEsc) {
        start_escape();
      } else if ((unit.code >= 0x20 && unit.code != kDel) || c0_passes(unit.code)) {
        out_.push_back(static_cast<char>(unit.code));
      }
      return;  // the other C0 controls and DEL are dropped
    case Unit::Kind::kC1:
      switch (unit.code) {
        case kC1Csi:
          start_csi();
          return;
        case kC1Osc:
          start_osc();
          return;
        case kC1Dcs:
        case kC1Sos:
        case kC1Pm:
        case kC1Apc:
          start_ignored_string();
          return;
        default:
          return;  // the other C1 controls, and a stray ST, are dropped
      }
    case Unit::Kind::kText:
      if (scope_ == Scope::kInline) {
        inline_text(unit);
      } else {
        out_.append(unit.text);
      }
      return;
    case Unit::Kind::kInvalid:
      out_.append(kReplacement);
      return;
  }
}

void TerminalOutputFilter::inline_text(const Unit& unit) {
  const char32_t cp = unit.code_point;
  settle_joiner(cp);
  if (cp == kZeroWidthJoiner && (is_pictographic(previous_text_) || previous_text_ == 0xfe0f)) {
    joiner_held_ = true;  // after a pictograph: what follows decides
    joiner_previous_ = previous_text_;
  } else if (is_hidden_character(cp) && !joins_emoji(previous_text_, cp, 0)) {
    append_mark(out_, cp);
  } else {
    out_.append(unit.text);
  }
  previous_text_ = cp;
}

void TerminalOutputFilter::settle_joiner(char32_t next) {
  if (!joiner_held_) return;
  joiner_held_ = false;
  if (joins_emoji(joiner_previous_, kZeroWidthJoiner, next)) {
    out_.append("\u200d");
  } else {
    append_mark(out_, kZeroWidthJoiner);
  }
}

bool TerminalOutputFilter::sequence_control(unsigned char code) {
  if (code == kEsc) {
    start_escape();  // abandons the sequence so far, as in a terminal
  } else if (code == kCan || code == kSub) {
    to_ground();
  } else if (code == kDel) {
    // ignored inside a sequence, as in a terminal
  } else if (code < 0x20) {
    if (c0_passes(code)) out_.push_back(static_cast<char>(code));  // executed now; the sequence goes on
  } else {
    return false;
  }
  return true;
}

void TerminalOutputFilter::escape(const Unit& unit) {
  if (unit.kind != Unit::Kind::kAscii) {  // C1, text or invalid UTF-8 abandons the sequence and is read afresh
    to_ground();
    ground(unit);
    return;
  }
  const unsigned char code = unit.code;
  if (sequence_control(code)) return;
  if (is_intermediate(code)) {
    state_ = State::kEscapeIntermediate;
    hold_byte(code, kMaxEscapeBytes);
    return;
  }
  if (state_ == State::kEscape) {
    switch (code) {
      case '[':
        start_csi();
        return;
      case ']':
        start_osc();
        return;
      case 'P':  // DCS
      case 'X':  // SOS
      case '^':  // PM
      case '_':  // APC
        start_ignored_string();
        return;
      default:
        break;
    }
  }
  // A final byte, 0x30-0x7e. ESC \ on its own (a stray ST) is dropped here like any other unknown sequence.
  if (!dropped_) {
    sequence_.push_back(static_cast<char>(code));
    if (escape_allowed(sequence_, scope_)) out_ += sequence_;
  }
  to_ground();
}

void TerminalOutputFilter::csi(const Unit& unit) {
  if (unit.kind != Unit::Kind::kAscii) {
    to_ground();
    ground(unit);
    return;
  }
  const unsigned char code = unit.code;
  if (sequence_control(code)) return;
  if (code >= 0x40) {  // the final byte, 0x40-0x7e
    if (!dropped_) {
      sequence_.push_back(static_cast<char>(code));
      if (scope_ == Scope::kInline) {
        if (auto forwarded = inline_csi(sequence_)) out_ += *forwarded;
      } else if (csi_allowed(sequence_)) {
        out_ += sequence_;
      }
    }
    to_ground();
    return;
  }
  // 0x20-0x3f. Out of order (a parameter after an intermediate, a private marker < = > ? after the first
  // parameter byte), the sequence is read to its final byte and dropped, as the DEC parser's "CSI ignore" does.
  if (!dropped_ && code >= 0x30) {
    const bool after_intermediate = is_intermediate(static_cast<unsigned char>(sequence_.back()));
    const bool late_marker = code >= 0x3c && sequence_.size() > 2;
    if (after_intermediate || late_marker) {
      drop();
      return;
    }
  }
  hold_byte(code, kMaxCsiBytes - 1);  // leaves room for the final byte
}

void TerminalOutputFilter::control_string(const Unit& unit) {
  switch (unit.kind) {
    case Unit::Kind::kAscii: {
      const unsigned char code = unit.code;
      if (code == kEsc) {
        state_ = State::kStringEscape;
      } else if (code == kCan || code == kSub) {
        to_ground();
      } else if (code == kBel && osc_) {
        end_string(kBelText);
      } else if (code < 0x20 || code == kDel) {
        drop();  // no controls in a forwarded payload; an ignored string skips them
      } else if (osc_payload_) {
        hold_byte(code, kMaxOscBytes);
      } else if (osc_ && !dropped_) {  // the OSC's number
        const size_t digits = sequence_.size() - 2;
        if (code == ';' && osc_number_allowed(std::string_view(sequence_).substr(2))) {
          osc_payload_ = true;
          hold_byte(code, kMaxOscBytes);
        } else if (code >= '0' && code <= '9' && digits < kMaxOscNumberDigits) {
          hold_byte(code, kMaxOscBytes);
        } else {
          drop();
        }
      }
      return;
    }
    case Unit::Kind::kC1:
      if (unit.code == kC1St) {
        end_string(kSt);
      } else {  // another C1 control abandons the string and is read afresh
        to_ground();
        ground(unit);
      }
      return;
    case Unit::Kind::kText:
      if (osc_payload_) {
        hold(unit.text, kMaxOscBytes);
      } else {
        drop();
      }
      return;
    case Unit::Kind::kInvalid:
      drop();
      return;
  }
}

void TerminalOutputFilter::control_string_escape(const Unit& unit) {
  if (unit.kind == Unit::Kind::kAscii && unit.code == '\\') {
    end_string(kSt);
    return;
  }
  // Not ST: the string is abandoned (dropped) and its ESC begins a new sequence.
  to_ground();
  start_escape();
  escape(unit);
}

void TerminalOutputFilter::start_escape() {
  to_ground();
  state_ = State::kEscape;
  sequence_.assign("\x1b");
}

void TerminalOutputFilter::start_csi() {
  to_ground();
  state_ = State::kCsi;
  sequence_.assign("\x1b[");
}

void TerminalOutputFilter::start_osc() {
  to_ground();
  state_ = State::kString;
  osc_ = true;
  sequence_.assign("\x1b]");
  if (scope_ == Scope::kInline) drop();  // read to its end (BEL or ST), then dropped
}

void TerminalOutputFilter::start_ignored_string() {
  to_ground();
  state_ = State::kString;
  drop();
}

void TerminalOutputFilter::end_string(std::string_view terminator) {
  // An OSC ended in its number ("OSC 104 BEL") is forwarded when the number is allowed.
  const bool forward =
      osc_ && !dropped_ && (osc_payload_ || osc_number_allowed(std::string_view(sequence_).substr(2)));
  if (forward) {
    out_ += sequence_;
    out_ += terminator;
  }
  to_ground();
}

void TerminalOutputFilter::to_ground() {
  state_ = State::kGround;
  dropped_ = false;
  osc_ = false;
  osc_payload_ = false;
  if (sequence_.capacity() > kKeepCapacity) {
    std::string().swap(sequence_);
  } else {
    sequence_.clear();
  }
}

void TerminalOutputFilter::hold(std::string_view bytes, size_t limit) {
  if (dropped_) return;
  if (sequence_.size() + bytes.size() > limit) {
    drop();
    return;
  }
  sequence_.append(bytes);
}

void TerminalOutputFilter::hold_byte(unsigned char byte, size_t limit) {
  const char c = static_cast<char>(byte);
  hold(std::string_view(&c, 1), limit);
}

void TerminalOutputFilter::drop() {
  dropped_ = true;
  sequence_.clear();
}

}  // namespace oishell
