// Learned entries to policy text: quoting, the comments, the layout of a new file. See learn_entries.h.
#include <algorithm>
#include <cstdio>

#include "policy/learn_entries.h"

namespace oishell::policy {
namespace {

bool plain_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("/._+@%=-~").find(c) != std::string_view::npos;
}

std::string hex_escape(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

// An argument of the command as a shell would need it: as is, or in single quotes.
std::string shell_word(const std::string& word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain_char)) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string times(uint64_t n) { return std::to_string(n) + (n == 1 ? " time" : " times"); }

// The order a new file's sections come in.
const std::vector<std::string>& section_order() {
  static const std::vector<std::string> kOrder = {"filesystem", "network", "process", "limits"};
  return kOrder;
}

}  // namespace

void Tally::add(const std::string& program, const std::string& verb, const std::string& what, uint64_t count) {
  Use& use = programs_[program.empty() ? "?" : program];
  use.whats[verb].insert(what);
  use.count += count;
}

void Tally::merge(const Tally& other) {
  for (const auto& [program, use] : other.programs_) {
    Use& mine = programs_[program];
    for (const auto& [verb, whats] : use.whats) mine.whats[verb].insert(whats.begin(), whats.end());
    mine.count += use.count;
  }
}

std::string Tally::describe(const std::string& self, const std::string& noun) const {
  std::string out;
  for (const auto& [program, use] : programs_) {
    std::string verbs;
    for (const auto& [verb, whats] : use.whats) {
      if (!verbs.empty()) verbs += ", ";
      verbs += verb;
      if (whats.size() != 1 || *whats.begin() != self) {
        verbs += " " + std::to_string(whats.size()) + " " + noun + (whats.size() == 1 ? "" : "s");
      }
    }
    if (!out.empty()) out += "; ";
    out += program + ": " + verbs + " (" + times(use.count) + ")";
  }
  return comment_text(out);
}

std::string yaml_scalar(const std::string& text) {
  static const std::vector<std::string> kWords = {"true", "false", "yes", "no", "on", "off", "null", "~"};
  bool plain = !text.empty() && std::all_of(text.begin(), text.end(), plain_char) && text[0] != '-' &&
               text[0] != '@' && text[0] != '%' && text[0] != '~' &&
               std::none_of(kWords.begin(), kWords.end(), [&](const std::string& w) {
                 return std::equal(w.begin(), w.end(), text.begin(), text.end(),
                                   [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
               });
  if (plain) return text;
  std::string out = "\"";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += hex_escape(u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string comment_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? hex_escape(u) : std::string(1, c);
  }
  return out;
}

void set_network_rule_text(LearnEntry& entry) {
  std::string ports;
  Tally tally;
  for (uint16_t p : entry.ports) {
    ports += (ports.empty() ? "" : ", ") + std::to_string(p);
    if (auto it = entry.port_tallies.find(p); it != entry.port_tallies.end()) tally.merge(it->second);
  }
  entry.value = "{host: " + yaml_scalar(entry.plain) + ", ports: [" + ports + "]" +
                (entry.protocol == "udp" ? ", protocol: udp" : "") + "}";
  entry.comment = tally.describe(entry.ports.size() == 1 ? std::to_string(entry.ports[0]) : "", "port");
}

std::string entry_line(const LearnEntry& entry) {
  std::string line = entry.scalar ? "  " + entry.key + ": " + entry.value : "    - " + entry.value;
  if (!entry.comment.empty()) line += "   # " + entry.comment;
  return line + "\n";
}

std::string render_not_granted(const std::vector<NotGranted>& not_granted) {
  if (not_granted.empty()) return "";
  std::string out = "# Wanted, not granted (the base hides it, or it may never be granted):\n";
  for (const auto& n : not_granted) {
    out += "#   " + comment_text(n.line) + (n.comment.empty() ? "" : "   # " + n.comment) + "\n";
  }
  return out;
}

std::string render_policy(const LearnRun& run, const std::vector<LearnEntry>& entries,
                          const std::vector<NotGranted>& not_granted) {
  std::string command;
  for (const auto& word : run.command) command += (command.empty() ? "" : " ") + shell_word(word);
  std::string out = "# Learned by `oishell learn` from: " + comment_text(command) + "\n";
  out += "# What this command needed on top of `" + comment_text(run.extends) +
         "`; each entry says which programs used it and how often.\n";
  if (run.exit_status != 0) {
    out += "# Note: the learning run failed (exit " + std::to_string(run.exit_status) +
           "): what it did not reach is not listed.\n";
  }
  out += "version: 1\n";
  out += "extends: " + yaml_scalar(run.extends) + "\n";
  for (const auto& section : section_order()) {
    std::vector<std::string> keys;
    for (const auto& e : entries) {
      if (e.section == section && std::find(keys.begin(), keys.end(), e.key) == keys.end()) keys.push_back(e.key);
    }
    if (keys.empty()) continue;
    out += section + ":\n";
    for (const auto& key : keys) {
      bool list = false;
      for (const auto& e : entries) {
        if (e.section != section || e.key != key) continue;
        if (!e.scalar && !list) {
          out += "  " + key + ":\n";
          list = true;
        }
        out += entry_line(e);
      }
    }
  }
  return out + render_not_granted(not_granted);
}

}  // namespace oishell::policy
