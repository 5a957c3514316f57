// Safe YAML loading: see yaml_safe.h.
#include "policy/yaml_safe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <yaml.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::policy {
namespace {

// A position in the text, 0-based as libyaml marks it; line -1 when there is none.
struct Mark {
  int line = -1;
  int column = -1;
};

Mark mark_of(const yaml_mark_t& m) { return Mark{static_cast<int>(m.line), static_cast<int>(m.column)}; }

struct LoadStop {
  Mark mark;
  std::string message;
  std::string hint;
};

// A plain scalar that YAML reads as null: `key:`, `key: ~`, `key: null`.
bool is_null_scalar(const yaml_event_t& e) {
  if (e.data.scalar.tag != nullptr || e.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
  std::string_view v(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
  return v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL";
}

// Bounds libyaml's events and builds the tree from them, in one pass. A collection is built on a stack until its
// end event, then moved into its parent (or made the root). libyaml keeps its own state on explicit stacks (no
// recursion), and the limits below stop it before it reads or allocates past them.
class TreeBuilder {
 public:
  // Parses the whole text; the tree, or where and why it stopped.
  std::optional<LoadStop> run(std::string_view text) {
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return LoadStop{{}, "YAML parser: out of memory", ""};
    std::unique_ptr<yaml_parser_t, void (*)(yaml_parser_t*)> owner(&parser, &yaml_parser_delete);
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    for (;;) {
      yaml_event_t event;
      if (!yaml_parser_parse(&parser, &event)) {
        std::string message = std::string("YAML syntax error: ") + (parser.problem ? parser.problem : "unreadable");
        if (parser.context) message += std::string(" ") + parser.context;
        return LoadStop{mark_of(parser.problem_mark), std::move(message), ""};
      }
      std::unique_ptr<yaml_event_t, void (*)(yaml_event_t*)> event_owner(&event, &yaml_event_delete);
      if (event.type == YAML_STREAM_END_EVENT) return std::nullopt;
      if (auto stop = on_event(event)) return stop;
    }
  }
  YamlNode take_root() { return std::move(root_); }

 private:
  std::optional<LoadStop> on_event(const yaml_event_t& e) {
    const Mark at = mark_of(e.start_mark);
    switch (e.type) {
      case YAML_DOCUMENT_START_EVENT:
        if (++documents_ > 1) return LoadStop{at, "more than one YAML document", "a policy is one document; remove `---`"};
        return std::nullopt;
      case YAML_ALIAS_EVENT:
        return LoadStop{at, "YAML aliases are not allowed in policies", "write the value out instead of `*name`"};
      case YAML_SCALAR_EVENT: {
        auto n = node(is_null_scalar(e) ? YamlNode::Kind::null : YamlNode::Kind::scalar, at);
        if (!n) return too_many(at);
        if (n->is_scalar()) n->value.assign(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
        add(std::move(*n));
        return std::nullopt;
      }
      case YAML_SEQUENCE_START_EVENT:
        return open(YamlNode::Kind::sequence, at);
      case YAML_MAPPING_START_EVENT:
        return open(YamlNode::Kind::map, at);
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        close();
        return std::nullopt;
      case YAML_NO_EVENT:
      case YAML_STREAM_START_EVENT:
      case YAML_STREAM_END_EVENT:
      case YAML_DOCUMENT_END_EVENT:
        return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<YamlNode> node(YamlNode::Kind kind, Mark at) {
    if (++nodes_ > kMaxNodes) return std::nullopt;
    YamlNode n;
    n.kind = kind;
    n.line = at.line;
    n.column = at.column;
    return n;
  }
  static LoadStop too_many(Mark at) {
    return LoadStop{at, "too many YAML nodes (more than " + std::to_string(kMaxNodes) + ")", "a policy is small"};
  }
  std::optional<LoadStop> open(YamlNode::Kind kind, Mark at) {
    auto n = node(kind, at);
    if (!n) return too_many(at);
    if (open_.size() >= static_cast<size_t>(kMaxDepth)) {
      return LoadStop{at, "nesting deeper than " + std::to_string(kMaxDepth) + " levels", "a policy is at most 4 deep"};
    }
    open_.push_back(std::move(*n));
    return std::nullopt;
  }
  void add(YamlNode n) {
    if (open_.empty()) {
      root_ = std::move(n);
    } else {
      open_.back().children.push_back(std::move(n));
    }
  }
  void close() {
    YamlNode done = std::move(open_.back());
    open_.pop_back();
    add(std::move(done));
  }

  int documents_ = 0;
  size_t nodes_ = 0;
  std::vector<YamlNode> open_;
  YamlNode root_;
};

Diagnostic at_mark(const std::string& file, Mark mark, std::string message, std::string hint = {}) {
  Diagnostic d;
  d.pos.file = file;
  if (mark.line >= 0) {
    d.pos.line = mark.line + 1;
    d.pos.column = mark.column + 1;
  }
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

}  // namespace

SourcePos pos_of(const YamlNode& node, const std::string& file) {
  SourcePos pos;
  pos.file = file;
  if (node.line >= 0) {
    pos.line = node.line + 1;
    pos.column = node.column + 1;
  }
  return pos;
}

YamlDocument load_yaml(std::string_view text, const std::string& file) {
  YamlDocument doc;
  if (text.size() > kMaxPolicyBytes) {
    doc.errors.push_back(at_mark(file, Mark{},
                                 "file is larger than the limit of " + std::to_string(kMaxPolicyBytes) + " bytes",
                                 "a policy is a few kilobytes"));
    return doc;
  }
  if (text.find('\0') != std::string_view::npos) {
    doc.errors.push_back(at_mark(file, Mark{}, "file contains NUL bytes; not a YAML or JSON text"));
    return doc;
  }
  TreeBuilder builder;
  if (auto stop = builder.run(text)) {
    doc.errors.push_back(at_mark(file, stop->mark, std::move(stop->message), std::move(stop->hint)));
  } else {
    doc.root = builder.take_root();
  }
  return doc;
}

YamlDocument load_yaml_file(const std::string& path, bool allow_special) {
  YamlDocument doc;
  auto fail = [&](std::string message) {
    Diagnostic d;
    d.pos.file = path;
    d.message = std::move(message);
    doc.errors.push_back(std::move(d));
    return doc;
  };
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; cleared again for reading.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | (allow_special ? 0 : O_NONBLOCK)));
  if (!fd) return fail(Status::from_errno(errno, "open(\"" + path + "\")").message());
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fail(Status::from_errno(errno, "fstat(\"" + path + "\")").message());
  if (!allow_special && !S_ISREG(st.st_mode)) {
    return fail(S_ISDIR(st.st_mode) ? Status::from_errno(EISDIR, "read(\"" + path + "\")").message()
                                    : "not a regular file");
  }
  std::unique_ptr<FILE, int (*)(FILE*)> file(::fdopen(fd.get(), "rb"), &std::fclose);
  if (!file) return fail(Status::from_errno(errno, "fdopen(\"" + path + "\")").message());
  (void)fd.release();
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, file.get())) > 0) {
    text.append(buf, n);
    if (text.size() > kMaxPolicyBytes) break;  // load_yaml reports the size; stop reading a huge file early
  }
  if (std::ferror(file.get())) {
    Diagnostic d;
    d.pos.file = path;
    d.message = Status::from_errno(errno, "read(\"" + path + "\")").message();
    doc.errors.push_back(std::move(d));
    return doc;
  }
  return load_yaml(text, path);
}

}  // namespace oishell::policy
