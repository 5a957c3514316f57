#pragma once
// BufferBudget: how many bytes of large buffers all of a relay's connections may hold together. Every direction
// may hold Direction::kFirstRead bytes without asking; growing past that (a bulk transfer) takes a lease on the
// rest of its capacity, given back when its buffer runs empty. When the budget is spent, further transfers keep
// the small buffer: slower, still correct. This bounds the supervisor's memory however many clients stop reading.
// Single-threaded (the relay's loop).
#include <cstddef>
#include <utility>

namespace oishell::relay {

class BufferBudget {
 public:
  explicit BufferBudget(size_t total) : total_(total) {}
  bool take(size_t bytes) {
    if (bytes > total_ - used_) return false;
    used_ += bytes;
    return true;
  }
  void give(size_t bytes) { used_ -= bytes; }
  size_t used() const { return used_; }

 private:
  size_t total_;
  size_t used_ = 0;
};

// A move-only claim on part of a BufferBudget, given back on release() or destruction.
class BudgetLease {
 public:
  BudgetLease() = default;
  ~BudgetLease() { release(); }
  BudgetLease(BudgetLease&& o) noexcept : budget_(std::exchange(o.budget_, nullptr)), bytes_(o.bytes_) {}
  BudgetLease& operator=(BudgetLease&& o) noexcept {
    if (this != &o) {
      release();
      budget_ = std::exchange(o.budget_, nullptr);
      bytes_ = o.bytes_;
    }
    return *this;
  }
  BudgetLease(const BudgetLease&) = delete;
  BudgetLease& operator=(const BudgetLease&) = delete;

  bool held() const { return budget_ != nullptr; }
  // Takes `bytes` from `budget`; false (and nothing held) when it has not that much left.
  bool acquire(BufferBudget& budget, size_t bytes) {
    release();
    if (!budget.take(bytes)) return false;
    budget_ = &budget;
    bytes_ = bytes;
    return true;
  }
  void release() {
    if (budget_) budget_->give(bytes_);
    budget_ = nullptr;
  }

 private:
  BufferBudget* budget_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace oishell::relay
