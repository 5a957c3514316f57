#include "agent/user/line_editor.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/host/atomic_file.h"
#include "agent/host/interrupt.h"
#include "base/unique_fd.h"

namespace oishell::agent {
namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Raw mode for the duration of one read: no echo, no line buffering, Enter as '\r'; signals stay on.
class RawMode {
 public:
  explicit RawMode(int fd) : fd_(fd) {
    if (::tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_iflag &= ~static_cast<tcflag_t>(ICRNL | IXON | INLCR | IGNCR);
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | IEXTEN);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(fd_, TCSADRAIN, &raw) == 0;
  }
  ~RawMode() {
    if (active_) ::tcsetattr(fd_, TCSADRAIN, &saved_);
  }
  RawMode(const RawMode&) = delete;
  RawMode& operator=(const RawMode&) = delete;

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

size_t columns(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

// The characters of `s` as the screen shows them: one per code point, a newline as "↵", a tab as a space.
std::vector<std::string> glyphs(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    while (j < s.size() && is_continuation(static_cast<unsigned char>(s[j]))) ++j;
    std::string g = s.substr(i, j - i);
    if (g == "\n") g = "\u21b5";
    else if (g == "\t") g = " ";
    out.push_back(std::move(g));
    i = j;
  }
  return out;
}

size_t glyph_count(const std::string& s, size_t upto) {
  size_t n = 0;
  for (size_t i = 0; i < upto && i < s.size(); ++i) n += !is_continuation(static_cast<unsigned char>(s[i]));
  return n;
}

}  // namespace

std::string LineHistory::encode(const std::string& line) {
  std::string out;
  for (char c : line) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string LineHistory::decode(const std::string& stored) {
  std::string out;
  for (size_t i = 0; i < stored.size(); ++i) {
    if (stored[i] == '\\' && i + 1 < stored.size()) {
      ++i;
      out += stored[i] == 'n' ? '\n' : stored[i];
    } else {
      out += stored[i];
    }
  }
  return out;
}

void LineHistory::load() {
  entries_.clear();
  auto text = read_file(path_, 4 << 20);
  if (!text) return;
  size_t start = 0;
  while (start < text->size()) {
    size_t nl = text->find('\n', start);
    if (nl == std::string::npos) nl = text->size();
    if (nl > start) entries_.push_back(decode(text->substr(start, nl - start)));
    start = nl + 1;
  }
  if (entries_.size() > kLimit) entries_.erase(entries_.begin(), entries_.end() - kLimit);
}

void LineHistory::add(const std::string& line) {
  if (line.empty() || line.front() == ' ') return;
  if (!entries_.empty() && entries_.back() == line) return;
  entries_.push_back(line);
  bool trim = entries_.size() > kLimit;
  if (trim) entries_.erase(entries_.begin());
  if (path_.empty()) return;
  auto slash = path_.rfind('/');
  if (slash != std::string::npos && !make_dirs(path_.substr(0, slash)).is_ok()) return;
  if (trim) {  // rewrite, keeping the newest kLimit
    std::string all;
    for (const auto& e : entries_) all += encode(e) + "\n";
    (void)write_file_atomic(path_, all, 0600);
    return;
  }
  UniqueFd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return;
  write_all(fd.get(), encode(line) + "\n");
}

LineEditor::Read LineEditor::next_byte(unsigned char* c) {
  if (pending_.empty()) {
    switch (interrupt::wait_readable(in_, wake_fd_, interrupts_seen_)) {
      case interrupt::Ready::interrupted: return Read::interrupted;
      case interrupt::Ready::other: return Read::woken;
      case interrupt::Ready::error: return Read::eof;
      case interrupt::Ready::fd: break;
    }
    char buf[256];
    ssize_t n = ::read(in_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) return Read::interrupted;
    if (n <= 0) return Read::eof;
    pending_.assign(buf, static_cast<size_t>(n));
  }
  *c = static_cast<unsigned char>(pending_.front());
  pending_.erase(0, 1);
  return Read::byte;
}

void LineEditor::insert(const std::string& text) {
  line_.insert(cursor_, text);
  cursor_ += text.size();
}

void LineEditor::render(const std::string& prompt) {
  const size_t width = columns(out_);
  const size_t prompt_width = glyph_count(prompt, prompt.size());
  const size_t room = width > prompt_width + 2 ? width - prompt_width - 1 : 1;
  std::vector<std::string> shown = glyphs(line_);
  size_t at = glyph_count(line_, cursor_);
  size_t first = at >= room ? at - room + 1 : 0;  // scroll so the cursor stays on screen
  std::string out = "\r" + prompt;
  for (size_t i = first; i < shown.size() && i < first + room; ++i) out += shown[i];
  out += "\x1b[K\r";
  size_t col = prompt_width + (at - first);
  if (col > 0) out += "\x1b[" + std::to_string(col) + "C";
  write_all(out_, out);
}

std::optional<std::string> LineEditor::read_line(const std::string& prompt, bool* interrupted) {
  if (interrupted) *interrupted = false;
  woken_ = false;
  interrupts_seen_ = interrupt::count();
  RawMode raw(in_);
  write_all(out_, "\x1b[?2004h");  // bracketed paste
  struct PasteOff {
    int fd;
    ~PasteOff() { write_all(fd, "\x1b[?2004l"); }
  } paste_off{out_};
  line_ = held_.value_or(std::string());
  held_.reset();
  cursor_ = line_.size();
  const std::vector<std::string> empty;
  const std::vector<std::string>& past = history_ ? history_->entries() : empty;
  size_t browsing = past.size();  // past.size(): the line being typed
  std::string typed;              // the line being typed, kept while browsing the history
  auto show_entry = [&](size_t index) {
    if (browsing == past.size()) typed = line_;
    browsing = index;
    line_ = index == past.size() ? typed : past[index];
    cursor_ = line_.size();
  };
  auto delete_forward = [this] {
    if (cursor_ >= line_.size()) return;
    size_t end = cursor_ + 1;
    while (end < line_.size() && is_continuation(static_cast<unsigned char>(line_[end]))) ++end;
    line_.erase(cursor_, end - cursor_);
  };
  render(prompt);
  while (true) {
    unsigned char c = 0;
    Read r = next_byte(&c);
    if (r == Read::interrupted) {
      write_all(out_, "\r\n");
      if (interrupted) *interrupted = true;
      return std::nullopt;
    }
    if (r == Read::woken) {  // the prompt line is cleared; what was typed comes back at the next read
      write_all(out_, "\r\x1b[K");
      if (!line_.empty()) held_ = line_;
      woken_ = true;
      return std::nullopt;
    }
    if (r == Read::eof) {
      if (line_.empty()) return std::nullopt;
      write_all(out_, "\r\n");
      return line_;
    }
    switch (c) {
      case '\r':
      case '\n':
        write_all(out_, "\r\n");
        if (history_) history_->add(line_);
        return line_;
      case 0x04:  // Ctrl-D: end of input on an empty line, else delete forward
        if (line_.empty()) {
          write_all(out_, "\r\n");
          return std::nullopt;
        }
        delete_forward();
        break;
      case 0x7f:
      case 0x08:  // Backspace
        if (cursor_ > 0) {
          size_t start = cursor_ - 1;
          while (start > 0 && is_continuation(static_cast<unsigned char>(line_[start]))) --start;
          line_.erase(start, cursor_ - start);
          cursor_ = start;
        }
        break;
      case 0x01: cursor_ = 0; break;             // Ctrl-A
      case 0x05: cursor_ = line_.size(); break;  // Ctrl-E
      case 0x02:                                 // Ctrl-B
        while (cursor_ > 0 && is_continuation(static_cast<unsigned char>(line_[--cursor_]))) {}
        break;
      case 0x06:  // Ctrl-F
        if (cursor_ < line_.size()) {
          ++cursor_;
          while (cursor_ < line_.size() && is_continuation(static_cast<unsigned char>(line_[cursor_]))) ++cursor_;
        }
        break;
      case 0x15: line_.erase(0, cursor_), cursor_ = 0; break;  // Ctrl-U
      case 0x0b: line_.erase(cursor_); break;                  // Ctrl-K
      case 0x17: {                                             // Ctrl-W: the word before the cursor
        size_t start = cursor_;
        while (start > 0 && line_[start - 1] == ' ') --start;
        while (start > 0 && line_[start - 1] != ' ') --start;
        line_.erase(start, cursor_ - start);
        cursor_ = start;
        break;
      }
      case 0x0c: write_all(out_, "\x1b[H\x1b[2J"); break;  // Ctrl-L
      case 0x10:                                            // Ctrl-P
        if (browsing > 0) show_entry(browsing - 1);
        break;
      case 0x0e:  // Ctrl-N
        if (browsing < past.size()) show_entry(browsing + 1);
        break;
      case '\t': insert("    "); break;
      case 0x1b: {  // an escape sequence: ESC [ ... final, or ESC O x
        unsigned char a = 0, b = 0;
        if (next_byte(&a) != Read::byte) break;
        if (a != '[' && a != 'O') break;  // Alt-something: ignored
        std::string params;
        while (true) {
          if (next_byte(&b) != Read::byte) break;
          if (b >= 0x40 && b <= 0x7e) break;
          if (params.size() < 16) params += static_cast<char>(b);
        }
        if (b == 'A') {
          if (browsing > 0) show_entry(browsing - 1);
        } else if (b == 'B') {
          if (browsing < past.size()) show_entry(browsing + 1);
        } else if (b == 'C') {
          if (cursor_ < line_.size()) {
            ++cursor_;
            while (cursor_ < line_.size() && is_continuation(static_cast<unsigned char>(line_[cursor_]))) ++cursor_;
          }
        } else if (b == 'D') {
          while (cursor_ > 0 && is_continuation(static_cast<unsigned char>(line_[--cursor_]))) {}
        } else if (b == 'H' || (b == '~' && (params == "1" || params == "7"))) {
          cursor_ = 0;
        } else if (b == 'F' || (b == '~' && (params == "4" || params == "8"))) {
          cursor_ = line_.size();
        } else if (b == '~' && params == "3") {  // Delete
          delete_forward();
        } else if (b == '~' && params == "200") {  // a paste: text up to ESC [ 201 ~, newlines kept
          std::string pasted;
          const std::string end_marker = "\x1b[201~";
          while (!pasted.ends_with(end_marker)) {
            unsigned char p = 0;
            Read pr = next_byte(&p);
            if (pr == Read::interrupted) {
              write_all(out_, "\r\n");
              if (interrupted) *interrupted = true;
              return std::nullopt;
            }
            if (pr != Read::byte) break;
            pasted += static_cast<char>(p);
            if (pasted.size() > (1u << 20) + end_marker.size()) break;  // 1 MiB is past any prompt
          }
          if (pasted.ends_with(end_marker)) pasted.resize(pasted.size() - end_marker.size());
          std::string clean;
          for (size_t i = 0; i < pasted.size(); ++i) {
            unsigned char p = static_cast<unsigned char>(pasted[i]);
            if (p == '\r') {
              clean += '\n';
              if (i + 1 < pasted.size() && pasted[i + 1] == '\n') ++i;
            } else if (p == '\n' || p == '\t' || (p >= 0x20 && p != 0x7f)) {
              clean += static_cast<char>(p);
            }
          }
          insert(clean);
        }
        break;
      }
      default:
        if (c >= 0x20) insert(std::string(1, static_cast<char>(c)));
        break;  // other control characters: nothing
    }
    render(prompt);
  }
}

}  // namespace oishell::agent
