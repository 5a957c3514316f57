#pragma once
// Status and Result<T>: errors as values, carrying errno and the exact call, wrapped with context at each layer.
// No exceptions cross fork/exec or the sandbox boundary.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace oishell {

// "EPERM (Operation not permitted)"
std::string errno_text(int err);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  static Status ok() { return Status(); }
  // A failure described in words ("unknown profile `x`").
  static Status error(std::string message) { return Status(0, std::move(message)); }
  // A failed call: "open_tree(\"/usr\"): EPERM (Operation not permitted)".
  static Status from_errno(int err, std::string_view call);
  // A failure in words that also carries an errno for callers that branch on it (the message is not extended):
  // error_with_errno(ENOENT, "cannot resolve: Domain name not found").
  static Status error_with_errno(int err, std::string message) { return Status(err, std::move(message)); }

  bool is_ok() const { return !failed_; }
  explicit operator bool() const { return is_ok(); }
  int errno_value() const { return errno_; }  // 0 when the failure was not a call's
  // The errno's text is added when the message is first read: most failed calls are expected ones (ENOENT from
  // "does it exist?") whose message nobody reads, and strerror's locale lookup is not free. Like a std::string, one
  // Status is not read from two threads at once.
  const std::string& message() const {
    if (errno_pending_) {
      message_ += ": " + errno_text(errno_);
      errno_pending_ = false;
    }
    return message_;
  }

  // "binding workspace /home/u/p: open_tree(...): EPERM (...)"
  Status with_context(std::string_view context) const&;
  Status with_context(std::string_view context) &&;
  // "...: EPERM (...); <advice>": what to do about it, after the message; errno kept.
  Status with_advice(std::string_view advice) &&;

 private:
  Status(int err, std::string message, bool errno_pending = false)
      : failed_(true), errno_(err), errno_pending_(errno_pending), message_(std::move(message)) {}
  bool failed_ = false;
  int errno_ = 0;
  mutable bool errno_pending_ = false;  // message_ still lacks ": " + errno_text(errno_)
  mutable std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                     // NOLINT: implicit by design
  Result(Status status) : value_(std::move(status)) { assert(!std::get<Status>(value_).is_ok()); }  // NOLINT

  bool is_ok() const { return std::holds_alternative<T>(value_); }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Status& status() const& { return std::get<Status>(value_); }
  Status status() && { return std::get<Status>(std::move(value_)); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace oishell

// Propagate a failed Status/Result from the enclosing function, optionally with context.
#define OI_TRY(expr)                           \
  do {                                         \
    auto oi_status_ = (expr);                  \
    if (!oi_status_.is_ok()) return oi_status_; \
  } while (0)
#define OI_TRY_CTX(expr, context)                                         \
  do {                                                                    \
    auto&& oi_r_ = (expr);                                                \
    if (!oi_r_.is_ok()) return ::oishell::detail::status_of(oi_r_).with_context(context); \
  } while (0)

namespace oishell::detail {
inline const Status& status_of(const Status& s) { return s; }
template <typename T>
const Status& status_of(const Result<T>& r) { return r.status(); }
}  // namespace oishell::detail
