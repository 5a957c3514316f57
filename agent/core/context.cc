#include "agent/core/context.h"

#include "agent/llm/image.h"

namespace oishell::agent {
namespace {
constexpr size_t kPerMessage = 4;  // role and framing tokens
constexpr const char* kCutMarker = "\n\n[... middle of this message left out to fit the context window ...]\n\n";
}  // namespace

size_t estimate_tokens(std::string_view text) { return (text.size() + 3) / 4; }

size_t estimate_tokens(const Message& m) {
  if (m.type == "image") return image_tokens(m) + kPerMessage;
  return estimate_tokens(m.content) + estimate_tokens(m.format) + kPerMessage;
}

size_t estimate_tokens(const std::vector<Message>& messages) {
  size_t total = 0;
  for (const auto& m : messages) total += estimate_tokens(m);
  return total;
}

Trimmed trim_to_window(const std::string& system, const std::vector<Message>& all, size_t context_window,
                       size_t reserve) {
  Trimmed out;
  size_t fixed = estimate_tokens(system) + kPerMessage;
  size_t budget = context_window > fixed + reserve ? context_window - fixed - reserve : 0;
  // Images go first, oldest first: each becomes a line saying what it was.
  std::vector<Message> described;
  const std::vector<Message>* source = &all;
  size_t total = estimate_tokens(all);
  for (size_t i = 0; i < all.size() && total > budget; ++i) {
    if (!is_image_data(all[i])) continue;
    if (source == &all) {
      described = all;
      source = &described;
    }
    Message note{all[i].role, "image", "description", describe_image(all[i]) + ", left out to fit the context window",
                 all[i].call_id};
    total = total - estimate_tokens(all[i]) + estimate_tokens(note);
    described[i] = std::move(note);
    ++out.images_dropped;
  }
  const std::vector<Message>& messages = *source;
  // Walk back from the newest message while it fits.
  size_t used = 0;
  size_t first = messages.size();
  while (first > 0 && used + estimate_tokens(messages[first - 1]) <= budget) {
    used += estimate_tokens(messages[first - 1]);
    --first;
  }
  if (first == messages.size() && !messages.empty()) {
    // Even the newest message alone is too big: keep its head and tail.
    Message last = messages.back();
    size_t keep_bytes = budget > kPerMessage + 32 ? (budget - kPerMessage - 32) * 4 : 256;
    if (last.content.size() > keep_bytes) {
      size_t head = keep_bytes / 2, tail = keep_bytes - head;
      last.content = last.content.substr(0, head) + kCutMarker + last.content.substr(last.content.size() - tail);
      out.cut_last = true;
    }
    used = estimate_tokens(last);
    out.messages.push_back(std::move(last));
    first = messages.size() - 1;
  } else {
    out.messages.assign(messages.begin() + static_cast<std::ptrdiff_t>(first), messages.end());
  }
  // An output whose code was trimmed away says little on its own: drop leading console messages.
  while (out.messages.size() > 1 && out.messages.front().role == "computer") {
    used -= estimate_tokens(out.messages.front());
    out.messages.erase(out.messages.begin());
    ++first;
  }
  out.dropped = first;
  out.tokens = fixed + used;
  return out;
}

}  // namespace oishell::agent
