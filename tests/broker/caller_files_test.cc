// CallerFiles (runtime/broker/caller.h): the pidfds the broker keeps per calling thread. Before Linux 6.9 a pidfd
// names a thread group, so a kept entry must not outlive its thread's membership of that group: a number reused by
// a thread of another process would otherwise take that process's fds (issue 33, finding 11). Shown here with
// group pidfds forced (as on those kernels) and with the kernel's own choice.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "runtime/broker/caller.h"
#include "runtime/sys/syscalls.h"

namespace oishell::broker {
namespace {

// The same open file: one (device, inode).
bool same_file(int a, int b) {
  struct stat sa{}, sb{};
  return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Runs `body` with the number of a second thread of this process, alive while it runs.
template <typename Body>
void with_thread(Body body) {
  pid_t tid = 0;
  bool done = false;
  std::mutex mu;
  std::condition_variable cv;
  std::thread t([&] {
    std::unique_lock lock(mu);
    tid = static_cast<pid_t>(::gettid());
    cv.notify_all();
    cv.wait(lock, [&] { return done; });
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return tid != 0; });
  }
  body(tid);
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  t.join();
}

TEST(CallerFiles, AGroupPidfdIsKeptOnlyWhileTheThreadIsInItsGroup) {
  UniqueFd file(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(file);
  with_thread([&](pid_t tid) {
    CallerFiles files(CallerFiles::Pidfds::thread_groups);
    auto first = files.get(tid);
    ASSERT_TRUE(first.is_ok()) << first.status().message();
    EXPECT_EQ(::getpid(), (*first)->group);
    UniqueFd taken(sys::pidfd_getfd((*first)->pidfd.get(), file.get(), 0));
    ASSERT_TRUE(taken) << "pidfd_getfd: " << std::strerror(errno);
    EXPECT_TRUE(same_file(file.get(), taken.get()));
    // Still in its group: the kept entry serves.
    auto again = files.get(tid);
    ASSERT_TRUE(again.is_ok());
    EXPECT_EQ(first->get(), again->get());
    // An entry made when the number was another group's (here: written so) is not used for it now.
    (*first)->group = ::getpid() + 1;
    auto reopened = files.get(tid);
    ASSERT_TRUE(reopened.is_ok()) << reopened.status().message();
    EXPECT_NE(first->get(), reopened->get());
    EXPECT_EQ(::getpid(), (*reopened)->group);
  });
}

TEST(CallerFiles, AThreadsOwnPidfdWhereTheKernelHasThem) {
  with_thread([&](pid_t tid) {
    UniqueFd probe(sys::pidfd_open(tid, PIDFD_THREAD));
    const bool thread_pidfds = static_cast<bool>(probe);  // Linux 6.9 and later
    CallerFiles files;
    auto entry = files.get(tid);
    ASSERT_TRUE(entry.is_ok()) << entry.status().message();
    EXPECT_EQ(thread_pidfds ? 0 : ::getpid(), (*entry)->group);
  });
}

TEST(CallerFiles, AThreadThatIsGoneIsAnError) {
  pid_t gone = 0;
  std::thread([&] { gone = static_cast<pid_t>(::gettid()); }).join();
  // The number is free now (not reused this soon: numbers go up until they wrap).
  CallerFiles files(CallerFiles::Pidfds::thread_groups);
  auto entry = files.get(gone);
  ASSERT_FALSE(entry.is_ok());
  EXPECT_NE(std::string::npos, entry.status().message().find("/proc/" + std::to_string(gone) + "/status"))
      << entry.status().message();
}

}  // namespace
}  // namespace oishell::broker
