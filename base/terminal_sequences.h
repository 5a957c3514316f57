#pragma once
// Which escape sequences TerminalOutputFilter (base/terminal_filter.h, whose header gives the policy and the reason
// for each line) lets through, one complete sequence at a time: plain ESC sequences, CSI sequences (and, in line
// with someone else's text, what is left of one), and OSC numbers. Pure: the filter's parser decides where a
// sequence starts and ends, these decide whether it passes.
#include <optional>
#include <string>
#include <string_view>

#include "base/terminal_filter.h"

namespace oishell::terminal_sequences {

// An intermediate byte of an ESC or CSI sequence (SP to '/').
inline bool is_intermediate(unsigned char code) { return code >= 0x20 && code <= 0x2f; }

// `sequence` is ESC, its intermediates and its final byte (0x30-0x7e, not an introducer).
bool escape_allowed(std::string_view sequence, TerminalOutputFilter::Scope scope);

// `sequence` is a complete CSI in 7-bit form: ESC [, parameters, intermediates, final byte.
bool csi_allowed(std::string_view sequence);

// Inline scope: `sequence`, a complete CSI in 7-bit form, as it may be forwarded (SGR cut down to the attributes
// that colour or style the output's own text), or nullopt.
std::optional<std::string> inline_csi(std::string_view sequence);

// The number of an OSC, exactly as written before its ';' (or its terminator).
bool osc_number_allowed(std::string_view number);

}  // namespace oishell::terminal_sequences
