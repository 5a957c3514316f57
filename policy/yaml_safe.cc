// Safe YAML loading: see yaml_safe.h.
#include "policy/yaml_safe.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include <yaml-cpp/eventhandler.h>
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

// Counts and bounds the events before any tree is built.
class BoundsChecker : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) throw ScanStop{mark, "more than one YAML document", "a policy is one document; remove `---`"};
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw ScanStop{mark, "YAML aliases are not allowed in policies", "write the value out instead of `*name`"};
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    count(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void count(const YAML::Mark& mark) {
    if (++nodes_ > kMaxNodes) {
      throw ScanStop{mark, "too many YAML nodes (more than " + std::to_string(kMaxNodes) + ")", "a policy is small"};
    }
  }
  void open(const YAML::Mark& mark) {
    count(mark);
    if (++depth_ > kMaxDepth) {
      throw ScanStop{mark, "nesting deeper than " + std::to_string(kMaxDepth) + " levels", "a policy is at most 4 deep"};
    }
  }
  int documents_ = 0;
  int depth_ = 0;
  size_t nodes_ = 0;
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

SourcePos pos_of(const YAML::Node& node, const std::string& file) {
  SourcePos pos;
  pos.file = file;
  YAML::Mark mark = node.Mark();
  if (mark.line >= 0) {
    pos.line = mark.line + 1;
    pos.column = mark.column + 1;
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
    BoundsChecker checker;
    while (parser.HandleNextDocument(checker)) {
    }
    doc.root = YAML::Load(copy);
  } catch (const ScanStop& stop) {
    doc.errors.push_back(at_mark(file, stop.mark, stop.message, stop.hint));
    doc.root = YAML::Node();
  } catch (const YAML::Exception& e) {
    doc.errors.push_back(at_mark(file, e.mark, "YAML syntax error: " + e.msg));
    doc.root = YAML::Node();
  } catch (const std::exception& e) {
    doc.errors.push_back(at_mark(file, YAML::Mark::null_mark(), std::string("YAML error: ") + e.what()));
    doc.root = YAML::Node();
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
