// Safe YAML loading: see yaml_safe.h.
#include "policy/yaml_safe.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::policy {
namespace {

struct ScanStop {
  YAML::Mark mark;
  std::string message;
  std::string hint;
};

// Bounds the events and builds the tree from them. A collection is built on the stack until its end event,
// then moved into its parent (or made the root).
class TreeBuilder : public YAML::EventHandler {
 public:
  YamlNode take_root() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) throw ScanStop{mark, "more than one YAML document", "a policy is one document; remove `---`"};
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { add(node(YamlNode::Kind::null, mark)); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw ScanStop{mark, "YAML aliases are not allowed in policies", "write the value out instead of `*name`"};
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    YamlNode n = node(YamlNode::Kind::scalar, mark);
    n.value = value;
    add(std::move(n));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(YamlNode::Kind::sequence, mark);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(YamlNode::Kind::map, mark);
  }
  void OnMapEnd() override { close(); }

 private:
  YamlNode node(YamlNode::Kind kind, const YAML::Mark& mark) {
    if (++nodes_ > kMaxNodes) {
      throw ScanStop{mark, "too many YAML nodes (more than " + std::to_string(kMaxNodes) + ")", "a policy is small"};
    }
    YamlNode n;
    n.kind = kind;
    n.line = mark.line;
    n.column = mark.column;
    return n;
  }
  void add(YamlNode n) {
    if (open_.empty()) {
      root_ = std::move(n);
    } else {
      open_.back().children.push_back(std::move(n));
    }
  }
  void open(YamlNode::Kind kind, const YAML::Mark& mark) {
    YamlNode n = node(kind, mark);
    if (open_.size() >= static_cast<size_t>(kMaxDepth)) {
      throw ScanStop{mark, "nesting deeper than " + std::to_string(kMaxDepth) + " levels", "a policy is at most 4 deep"};
    }
    open_.push_back(std::move(n));
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

Diagnostic at_mark(const std::string& file, const YAML::Mark& mark, std::string message, std::string hint = {}) {
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
    doc.errors.push_back(at_mark(file, YAML::Mark::null_mark(),
                                 "file is larger than the limit of " + std::to_string(kMaxPolicyBytes) + " bytes",
                                 "a policy is a few kilobytes"));
    return doc;
  }
  if (text.find('\0') != std::string_view::npos) {
    doc.errors.push_back(at_mark(file, YAML::Mark::null_mark(), "file contains NUL bytes; not a YAML or JSON text"));
    return doc;
  }
  std::string copy(text);
  try {
    std::istringstream in(copy);
    YAML::Parser parser(in);
    TreeBuilder builder;
    while (parser.HandleNextDocument(builder)) {
    }
    doc.root = builder.take_root();
  } catch (const ScanStop& stop) {
    doc.errors.push_back(at_mark(file, stop.mark, stop.message, stop.hint));
    doc.root = YamlNode();
  } catch (const YAML::Exception& e) {
    doc.errors.push_back(at_mark(file, e.mark, "YAML syntax error: " + e.msg));
    doc.root = YamlNode();
  } catch (const std::exception& e) {
    doc.errors.push_back(at_mark(file, YAML::Mark::null_mark(), std::string("YAML error: ") + e.what()));
    doc.root = YamlNode();
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
