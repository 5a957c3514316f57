// Widening a file written by write_learned_policy(): new entries inserted as lines, every existing line kept byte
// for byte. The file's tree (policy/yaml_safe.h) says where each section, key and item is; insertion goes only
// where the layout is the one render_policy() writes (sections at column 0, keys at 2, block list items at 4, one
// item a line), otherwise the file is refused rather than rewritten. See learn_entries.h.
#include <algorithm>
#include <charconv>

#include "policy/learn_entries.h"
#include "policy/yaml_safe.h"

namespace oishell::policy {
namespace {

const char kAdvice[] =
    "; write the learned policy to another file (-o ANOTHER_FILE) and compare the two with `oishell diff`";

Status foreign(const std::string& why) {
  return Status::error("the existing policy is not in the layout `oishell learn` writes: " + why + kAdvice);
}

// The value under `key` in mapping `map`; null when absent.
const YamlNode* child(const YamlNode& map, const std::string& key, const YamlNode** key_node = nullptr) {
  for (size_t i = 0; i + 1 < map.children.size(); i += 2) {
    if (map.children[i].is_scalar() && map.children[i].value == key) {
      if (key_node) *key_node = &map.children[i];
      return &map.children[i + 1];
    }
  }
  return nullptr;
}

int last_line(const YamlNode& node) {
  int line = node.line;
  for (const auto& c : node.children) line = std::max(line, last_line(c));
  return line;
}

class Widener {
 public:
  explicit Widener(const std::string& text) : text_(text) {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      lines_.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }

  // The character a node starts with ('-' for a block list, '{' or '[' for a flow collection).
  char first_char(const YamlNode& node) const {
    if (node.line < 0 || node.line >= static_cast<int>(lines_.size())) return 0;
    const std::string& line = lines_[node.line];
    return node.column >= 0 && node.column < static_cast<int>(line.size()) ? line[node.column] : 0;
  }

  void insert_before(int line, const std::string& text) { inserts_[line] += text; }

  std::string result() const {
    std::string out;
    for (size_t i = 0; i <= lines_.size(); ++i) {
      if (auto it = inserts_.find(static_cast<int>(i)); it != inserts_.end()) out += it->second;
      if (i < lines_.size()) out += lines_[i] + "\n";
    }
    if (!text_.empty() && !text_.ends_with('\n') && inserts_.find(static_cast<int>(lines_.size())) == inserts_.end()) {
      out.pop_back();
    }
    return out;
  }

  int line_count() const { return static_cast<int>(lines_.size()); }

 private:
  const std::string& text_;
  std::vector<std::string> lines_;
  std::map<int, std::string> inserts_;  // before line N (N = line count: at the end)
};

// What a list already holds: plain values, and for network rules the ports per "host protocol".
struct Existing {
  std::set<std::string> values;
  std::map<std::string, std::set<uint16_t>> ports;
};

Result<Existing> existing_items(const YamlNode& list, const Widener& w, const std::string& where) {
  Existing out;
  if (!list.is_sequence() || w.first_char(list) != '-' || list.column != 4) {
    return foreign(where + " is not a block list with its items at column 5");
  }
  int previous = -1;
  for (const auto& item : list.children) {
    if (item.line == previous) return foreign(where + " has two items on one line");
    previous = item.line;
    if (item.is_scalar()) {
      out.values.insert(item.value);
    } else if (item.is_map() && w.first_char(item) == '{') {
      const YamlNode* host = child(item, "host");
      const YamlNode* protocol = child(item, "protocol");
      const YamlNode* ports = child(item, "ports");
      if (!host || !host->is_scalar()) continue;
      std::string key = host->value + " " + (protocol && protocol->is_scalar() ? protocol->value : "tcp");
      auto& known = out.ports[key];
      if (!ports) known.insert(0);  // every port
      for (const auto& p : ports ? ports->children : std::vector<YamlNode>{}) {
        unsigned port = 0;
        auto [end, err] = std::from_chars(p.value.data(), p.value.data() + p.value.size(), port);
        if (err == std::errc() && end == p.value.data() + p.value.size() && port <= 65535) {
          known.insert(static_cast<uint16_t>(port));
        }
      }
    } else {
      return foreign(where + " has an item that is not one line");
    }
  }
  return out;
}

// Whether `e` is new against what the list holds; a network rule keeps only its ports not yet listed.
bool keep_new(LearnEntry& e, const Existing& existing) {
  if (e.protocol.empty()) return existing.values.count(e.plain) == 0;
  auto it = existing.ports.find(e.plain + " " + e.protocol);
  if (it == existing.ports.end()) return true;
  if (it->second.count(0)) return false;
  std::erase_if(e.ports, [&](uint16_t p) { return it->second.count(p) != 0; });
  if (e.ports.empty()) return false;
  set_network_rule_text(e);
  return true;
}

}  // namespace

Result<std::string> widen_policy_text(const std::string& existing, std::vector<LearnEntry>& entries,
                                      const std::vector<NotGranted>& not_granted) {
  YamlDocument doc = load_yaml(existing, "the existing policy");
  if (!doc.errors.empty()) return foreign("it does not load: " + doc.errors.front().format());
  if (!doc.root.is_map()) return foreign("it is not a mapping of sections");
  Widener w(existing);
  const int end_of_content = last_line(doc.root) + 1;

  std::vector<LearnEntry> added;
  std::string new_sections;
  std::vector<std::string> sections;
  for (const auto& e : entries) {
    if (std::find(sections.begin(), sections.end(), e.section) == sections.end()) sections.push_back(e.section);
  }
  for (const auto& section : sections) {
    const YamlNode* section_key = nullptr;
    const YamlNode* body = child(doc.root, section, &section_key);
    std::vector<LearnEntry*> mine;
    for (auto& e : entries) {
      if (e.section == section) mine.push_back(&e);
    }
    if (!body) {
      // A new section: written as a new file would have it.
      std::string text = section + ":\n";
      std::string list_key;
      for (auto* e : mine) {
        if (!e->scalar && e->key != list_key) text += "  " + e->key + ":\n";
        list_key = e->scalar ? "" : e->key;
        text += entry_line(*e);
        added.push_back(*e);
      }
      new_sections += text;
      continue;
    }
    if (section_key->column != 0 || !body->is_map() || w.first_char(*body) == '{' || body->column != 2) {
      return foreign("`" + section + "` is not a block mapping with its keys at column 3");
    }
    const int section_end = last_line(*body) + 1;
    std::vector<std::string> keys;
    for (auto* e : mine) {
      if (std::find(keys.begin(), keys.end(), e->key) == keys.end()) keys.push_back(e->key);
    }
    for (const auto& key : keys) {
      const YamlNode* value = child(*body, key);
      std::string where = section + "." + key;
      std::string text;
      if (value && value->is_sequence()) {
        auto held = existing_items(*value, w, where);
        if (!held) return held.status();
        for (auto* e : mine) {
          if (e->key != key || !keep_new(*e, *held)) continue;
          text += entry_line(*e);
          added.push_back(*e);
        }
        if (!text.empty()) w.insert_before(last_line(*value) + 1, text);
        continue;
      }
      if (value && !value->is_scalar()) return foreign(where + " is neither a block list nor a value");
      for (auto* e : mine) {
        if (e->key != key) continue;
        if (value && !e->scalar) return foreign(where + " is not a block list");
        if (value) continue;  // a value the file already sets is kept as it is
        if (!e->scalar && text.empty()) text = "  " + key + ":\n";
        text += entry_line(*e);
        added.push_back(*e);
      }
      if (!text.empty()) w.insert_before(section_end, text);
    }
  }
  if (!new_sections.empty()) w.insert_before(end_of_content, new_sections);

  std::vector<NotGranted> new_not_granted;
  for (const auto& n : not_granted) {
    if (existing.find("#   " + comment_text(n.line)) == std::string::npos) new_not_granted.push_back(n);
  }
  if (!new_not_granted.empty()) w.insert_before(w.line_count(), render_not_granted(new_not_granted));
  entries = std::move(added);
  return w.result();
}

}  // namespace oishell::policy
