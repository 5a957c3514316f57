#pragma once
// `oishell run --watch-policy`: the policy file watched (inotify on its directory, so that an editor's
// write-then-rename is seen as well as a write in place) and `on_change` called on a thread of its own once the
// file has been quiet for a moment after a change. Only the file named is watched, not the files it extends.
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::cli {

class PolicyWatch {
 public:
  // `file`: the policy file (absolute or relative to the current directory). Precondition: the sandbox is built
  // (this starts a thread).
  [[nodiscard]] static Result<std::unique_ptr<PolicyWatch>> start(const std::string& file,
                                                                  std::function<void()> on_change);
  ~PolicyWatch();  // stops the thread; a change being applied finishes first
  PolicyWatch(const PolicyWatch&) = delete;
  PolicyWatch& operator=(const PolicyWatch&) = delete;

  // How long the file must be quiet after a change before it is read (an editor may write it in several steps).
  static constexpr int kQuietMs = 40;

 private:
  PolicyWatch() = default;
  void run();

  std::string name_;  // the file's name in its directory
  std::function<void()> on_change_;
  UniqueFd inotify_;
  UniqueFd stop_;  // eventfd
  std::thread thread_;
};

}  // namespace oishell::cli
