// Which escape sequences pass TerminalOutputFilter (base/terminal_sequences.h; the policy, line by line, is in
// base/terminal_filter.h).
#include "base/terminal_sequences.h"

#include <algorithm>
#include <iterator>

namespace oishell::terminal_sequences {
namespace {

// Whether one of the parameters (separated by ';' or ':') has the value `mode`. A value too large for every
// terminal to read the same way (some clamp, some might wrap) counts as a match.
bool has_parameter(std::string_view params, uint32_t mode) {
  uint32_t value = 0;
  for (size_t i = 0; i <= params.size(); ++i) {
    if (i == params.size() || params[i] == ';' || params[i] == ':') {
      if (value == mode || value > 0xffff) return true;
      value = 0;
    } else if (params[i] >= '0' && params[i] <= '9') {
      if (value <= 0xffff) value = value * 10 + static_cast<uint32_t>(params[i] - '0');
    }
  }
  return false;
}

// Inline scope: the SGR parameters `params` (no private marker) cut down to the attributes that colour or style
// the output's own text (see the header). nullopt: nothing is left, or an extended colour is cut short.
std::optional<std::string> inline_sgr(std::string_view params) {
  if (params.empty()) return std::string("\x1b[m");
  std::string kept;
  size_t kept_fields = 0;
  auto keep = [&kept, &kept_fields](std::string_view field) {
    if (kept_fields++ > 0) kept.push_back(';');
    kept.append(field);
  };
  size_t pos = 0;
  auto next_field = [&params, &pos]() {
    const size_t end = std::min(params.find(';', pos), params.size());
    const std::string_view field = params.substr(pos, end - pos);
    pos = end + 1;
    return field;
  };
  while (pos <= params.size()) {
    const std::string_view field = next_field();
    const std::string_view head = field.substr(0, field.find(':'));
    if (head.size() > 3 || head.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    uint32_t n = 0;
    for (char c : head) n = n * 10 + static_cast<uint32_t>(c - '0');
    if (n == 38 || n == 48 || n == 58) {  // an extended colour: 38:5:N, 38:2::R:G:B, or 38;5;N, 38;2;R;G;B
      std::string colour(field);
      if (head.size() == field.size()) {
        if (pos > params.size()) return std::nullopt;
        const std::string_view kind = next_field();
        const int more = kind == "5" ? 1 : kind == "2" ? 3 : -1;
        if (more < 0) return std::nullopt;
        colour += ";";
        colour += kind;
        for (int i = 0; i < more; ++i) {
          if (pos > params.size()) return std::nullopt;
          colour += ";";
          colour += next_field();
        }
      }
      if (n == 38) keep(colour);
      continue;
    }
    const bool allowed = n <= 6 || n == 9 || (n >= 21 && n <= 25) || n == 27 || n == 28 || n == 29 ||
                         (n >= 30 && n <= 37) || n == 39 || n == 49 || n == 53 || n == 55 || n == 59 ||
                         (n >= 90 && n <= 97);
    if (allowed) keep(field);
  }
  if (kept_fields == 0) return std::nullopt;
  return "\x1b[" + kept + "m";
}

}  // namespace

// `sequence` is ESC, its intermediates and its final byte (0x30-0x7e, not an introducer).
bool escape_allowed(std::string_view sequence, TerminalOutputFilter::Scope scope) {
  const char final_byte = sequence.back();
  const std::string_view intermediates = sequence.substr(1, sequence.size() - 2);
  if (scope == TerminalOutputFilter::Scope::kInline) {
    // DECKPAM DECKPNM IND NEL SS2 SS3 LS2 LS3 LS3R LS2R LS1R; the designations below. Not: DECSC DECRC RIS HTS
    // RI, ESC #.
    if (intermediates.empty()) return std::string_view("=>DENOno|}~").find(final_byte) != std::string_view::npos;
    if (intermediates[0] == '#') return false;
  }
  // DECSC DECRC RIS DECKPAM DECKPNM IND NEL HTS RI SS2 SS3 LS2 LS3 LS3R LS2R LS1R.
  if (intermediates.empty()) return std::string_view("78c=>DEHMNOno|}~").find(final_byte) != std::string_view::npos;
  // DECDHL (top, bottom) DECSWL DECDWL DECALN.
  if (intermediates == "#") return std::string_view("34568").find(final_byte) != std::string_view::npos;
  // G0-G3 designations: ( ) * + name a 94-character set, - . / a 96-character set, by the final byte and an
  // optional second intermediate ("ESC ( % 5").
  return intermediates.size() <= 2 && std::string_view("()*+-./").find(intermediates[0]) != std::string_view::npos;
}

// `sequence` is a complete CSI in 7-bit form: ESC [, parameters, intermediates, final byte.
bool csi_allowed(std::string_view sequence) {
  const char final_byte = sequence.back();
  const std::string_view body = sequence.substr(2, sequence.size() - 3);
  const auto split = std::find_if(body.begin(), body.end(), [](char c) { return is_intermediate(c); });
  const std::string_view params(body.begin(), split);
  const std::string_view intermediates(split, body.end());
  switch (final_byte) {
    case 't':  // window operations, including the title reports
      return false;
    case 'i':  // MC (media copy): to a printer
      return !intermediates.empty();
    case 'y':  // DECRQCRA: the checksum of a screen area
      return intermediates.find('*') == std::string_view::npos;
    case 'l':  // DECRST of mode 2 (DECANM): VT52 mode
      return !(intermediates.empty() && params.starts_with('?') && has_parameter(params.substr(1), 2));
    default:
      return true;
  }
}

// Inline scope: `sequence`, a complete CSI in 7-bit form, as it may be forwarded (SGR rewritten), or nullopt.
std::optional<std::string> inline_csi(std::string_view sequence) {
  const char final_byte = sequence.back();
  const std::string_view params = sequence.substr(2, sequence.size() - 3);
  if (std::any_of(params.begin(), params.end(), [](char c) { return is_intermediate(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  if (!params.empty() && params[0] >= 0x3c && params[0] <= 0x3f) {  // a private marker < = > ?
    // DECTCEM: progress bars hide the cursor while they draw (the reset shows it again).
    if ((final_byte == 'h' || final_byte == 'l') && params == "?25") return std::string(sequence);
    return std::nullopt;
  }
  switch (final_byte) {
    case 'm':
      return inline_sgr(params);
    case 'C':  // CUF: right
    case 'D':  // CUB: left (not past the line's start: reverse wraparound is a mode, and modes do not pass)
    case 'G':  // CHA: a column of this line
    case '`':  // HPA: a column of this line
    case 'a':  // HPR: right
    case 'B':  // CUD: down
    case 'E':  // CNL: down, to the first column
    case 'I':  // CHT: forward to a tab stop
    case 'Z':  // CBT: back to a tab stop
    case 'K':  // EL: erase in this line
    case 'X':  // ECH: erase characters
    case 'P':  // DCH: delete characters
    case '@':  // ICH: insert characters
      return std::string(sequence);
    case 'J':  // ED: only below the cursor, never above it or the scrollback
      return params.empty() || params == "0" ? std::optional<std::string>(sequence) : std::nullopt;
    default:
      return std::nullopt;
  }
}

// The number of an OSC, exactly as written before its ';' (or its terminator).
bool osc_number_allowed(std::string_view number) {
  static constexpr std::string_view kAllowed[] = {
      "0",   "1",   "2",                                        // icon name and window title
      "4",   "10",  "11",  "12",  "17",  "19",                  // colours: palette, fg, bg, cursor, highlight
      "104", "110", "111", "112", "117", "119",                 // their resets
      "7",                                                      // working directory
      "8",                                                      // hyperlink
      "133",                                                    // shell integration marks
  };
  return std::find(std::begin(kAllowed), std::end(kAllowed), number) != std::end(kAllowed);
}

}  // namespace oishell::terminal_sequences
