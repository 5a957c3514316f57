// unified_diff() of agent/sandbox/workspace_changes.h: Myers' O((N+M)D) line diff after the common prefix and suffix are
// set aside (most edits are local), with D capped so that two unrelated large texts cost little: past the cap the
// middle is shown as removed and added whole, which is still a correct diff, only not the shortest.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agent/sandbox/workspace_changes.h"

namespace oishell::agent {
namespace {

constexpr int kMaxEdits = 2000;  // D: the trace costs about D^2 ints (16 MB at the cap)

// Each line with its newline, so that a last line without one differs from the same text with one.
std::vector<std::string_view> split_lines(const std::string& text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    out.emplace_back(text.data() + start, end - start);
    start = end;
  }
  return out;
}

enum class Op : uint8_t { keep, remove, add };

// The edit script turning a[lo_a, hi_a) into b[lo_b, hi_b): keep, remove (of a) and add (of b), in order.
std::vector<Op> myers(const std::vector<std::string_view>& a, size_t lo_a, size_t hi_a,
                      const std::vector<std::string_view>& b, size_t lo_b, size_t hi_b) {
  const int n = static_cast<int>(hi_a - lo_a);
  const int m = static_cast<int>(hi_b - lo_b);
  const int max = n + m;
  std::vector<Op> ops;
  if (max == 0) return ops;
  const int cap = std::min(max, kMaxEdits);
  const int offset = cap + 1;
  std::vector<int> v(2 * static_cast<size_t>(cap) + 3, 0);
  std::vector<std::vector<int>> trace;  // trace[d]: v[k] for k in [-d-1, d+1] before step d
  int found = -1;
  for (int d = 0; d <= cap && found < 0; ++d) {
    trace.emplace_back(v.begin() + (offset - d - 1), v.begin() + (offset + d + 2));
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? v[offset + k + 1]
                                                                                : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[lo_a + x] == b[lo_b + y]) ++x, ++y;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0) {  // past the cap: all of a's middle removed, all of b's added
    ops.assign(static_cast<size_t>(n), Op::remove);
    ops.insert(ops.end(), static_cast<size_t>(m), Op::add);
    return ops;
  }
  std::vector<Op> reversed;
  int x = n, y = m;
  for (int d = found; d > 0; --d) {
    const std::vector<int>& prev = trace[d];
    auto at = [&](int k) { return prev[static_cast<size_t>(k + d + 1)]; };
    const int k = x - y;
    const int prev_k = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    const int prev_x = at(prev_k);
    const int prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      reversed.push_back(Op::keep);
      --x, --y;
    }
    reversed.push_back(prev_k == k + 1 ? Op::add : Op::remove);
    x = prev_x;
    y = prev_y;
  }
  while (x > 0 && y > 0) {
    reversed.push_back(Op::keep);
    --x, --y;
  }
  ops.assign(reversed.rbegin(), reversed.rend());
  return ops;
}

std::string range(size_t first, size_t count) {  // "-3,4" style, GNU's: a count of 1 is left out
  const size_t start = count == 0 ? first : first + 1;
  return std::to_string(start) + (count == 1 ? "" : "," + std::to_string(count));
}

std::string size_text(uint64_t bytes) { return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes"); }

std::string summary(const FileChange& c) {
  const std::string what = c.binary ? "Binary file " + c.path : "File " + c.path;
  const std::string why = c.binary ? "" : ": too large to show";
  switch (c.kind) {
    case FileChange::Kind::created: return what + " created (" + size_text(c.new_size) + ")" + why;
    case FileChange::Kind::deleted: return what + " deleted (" + size_text(c.old_size) + ")" + why;
    case FileChange::Kind::modified:
      return what + " changed (" + size_text(c.old_size) + " -> " + size_text(c.new_size) + ")" + why;
  }
  return what;
}

}  // namespace

std::string unified_diff(const FileChange& change, size_t context_lines, size_t max_bytes) {
  if (change.binary || change.too_large) return summary(change) + "\n";
  const std::string old_text = change.old_text.value_or(""), new_text = change.new_text.value_or("");
  const std::vector<std::string_view> a = split_lines(old_text);  // views into the two strings above
  const std::vector<std::string_view> b = split_lines(new_text);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  std::vector<Op> ops(prefix, Op::keep);
  const std::vector<Op> middle = myers(a, prefix, a.size() - suffix, b, prefix, b.size() - suffix);
  ops.insert(ops.end(), middle.begin(), middle.end());
  ops.insert(ops.end(), suffix, Op::keep);

  std::string out;
  out += change.kind == FileChange::Kind::created ? "--- /dev/null\n" : "--- a/" + change.path + "\n";
  out += change.kind == FileChange::Kind::deleted ? "+++ /dev/null\n" : "+++ b/" + change.path + "\n";
  // Each op's position in a and in b.
  std::vector<size_t> pos_a(ops.size() + 1), pos_b(ops.size() + 1);
  for (size_t i = 0; i < ops.size(); ++i) {
    pos_a[i + 1] = pos_a[i] + (ops[i] != Op::add ? 1 : 0);
    pos_b[i + 1] = pos_b[i] + (ops[i] != Op::remove ? 1 : 0);
  }
  auto line = [&](char mark, std::string_view text) {
    out += mark;
    out += text;
    if (!text.ends_with('\n')) out += "\n\\ No newline at end of file\n";
  };
  size_t i = 0;
  while (i < ops.size()) {
    if (ops[i] == Op::keep) {
      ++i;
      continue;
    }
    // A hunk: from `context_lines` before this change to `context_lines` after the last change that is no more
    // than 2 * context_lines unchanged lines from the one before it.
    const size_t begin = i > context_lines ? i - context_lines : 0;
    size_t end = i;
    while (true) {
      while (end < ops.size() && ops[end] != Op::keep) ++end;
      size_t next = end;
      while (next < ops.size() && ops[next] == Op::keep) ++next;
      if (next < ops.size() && next - end <= 2 * context_lines) {
        end = next;
        continue;
      }
      end = std::min(ops.size(), end + context_lines);
      break;
    }
    out += "@@ -" + range(pos_a[begin], pos_a[end] - pos_a[begin]) + " +" +
           range(pos_b[begin], pos_b[end] - pos_b[begin]) + " @@\n";
    for (size_t k = begin; k < end; ++k) {
      if (ops[k] == Op::keep) line(' ', a[pos_a[k]]);
      else if (ops[k] == Op::remove) line('-', a[pos_a[k]]);
      else line('+', b[pos_b[k]]);
      if (out.size() > max_bytes) {
        return out + "... (diff cut at " + std::to_string(max_bytes / 1024) + " KiB)\n";
      }
    }
    i = end;
  }
  return out;
}

}  // namespace oishell::agent
