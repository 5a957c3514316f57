// The minimal /dev and the fresh /proc of the sandbox.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "runtime/inside/mount_ops.h"
#include "runtime/inside/mount_plan.h"

namespace oishell {
namespace {

Status bind_device(int dev_fd, const char* name) {
  std::string host = std::string("/dev/") + name;
  auto source = mounts::open_host_path(host);
  if (!source.is_ok()) return source.status();
  auto tree = mounts::clone_tree(source->get(), /*recursive=*/false);
  if (!tree.is_ok()) return tree.status().with_context(host);
  OI_TRY_CTX(mounts::set_attributes(tree->get(), MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false), host);
  auto target = mounts::ensure(dev_fd, name, mounts::NodeType::file);
  if (!target.is_ok()) return target.status();
  return mounts::attach(tree->get(), target->get()).with_context(host);
}

Status mount_at(int parent_fd, const char* name, const char* type,
                const std::vector<std::pair<std::string, std::string>>& options, unsigned attributes) {
  auto target = mounts::ensure(parent_fd, name, mounts::NodeType::directory);
  if (!target.is_ok()) return target.status();
  auto fs = mounts::new_filesystem(type, options, attributes);
  if (!fs.is_ok()) return fs.status();
  return mounts::attach(fs->get(), target->get()).with_context(name);
}

Status read_only_over_itself(int proc_fd, const char* name) {
  auto found = mounts::lookup(proc_fd, name);
  if (!found.is_ok()) {
    return found.status().errno_value() == ENOENT ? Status::ok() : found.status().with_context(name);
  }
  auto tree = mounts::clone_tree(found->get(), /*recursive=*/true);
  if (!tree.is_ok()) return tree.status().with_context(name);
  OI_TRY_CTX(mounts::set_attributes(tree->get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                     MOUNT_ATTR_NOEXEC, true), name);
  return mounts::attach(tree->get(), found->get()).with_context(name);
}

}  // namespace

Status mount_minimal_dev(int target_fd, int shm_tree) {
  auto dev = mounts::new_filesystem("tmpfs", {{"mode", "0755"}, {"size", "64k"}, {"nr_inodes", "64"}},
                                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  if (!dev.is_ok()) return dev.status();
  OI_TRY(mounts::attach(dev->get(), target_fd));
  // The fsmount fd now names the attached tmpfs root.
  const int dev_fd = dev->get();
  for (const char* name : {"null", "zero", "full", "random", "urandom", "tty"}) {
    OI_TRY_CTX(bind_device(dev_fd, name), std::string("/dev/") + name);
  }
  OI_TRY_CTX(mount_at(dev_fd, "pts", "devpts", {{"ptmxmode", "0666"}, {"mode", "0620"}},
                      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC),
             "/dev/pts");
  auto shm = mounts::ensure(dev_fd, "shm", mounts::NodeType::directory);
  if (!shm.is_ok()) return shm.status().with_context("/dev/shm");
  OI_TRY_CTX(mounts::attach(shm_tree, shm->get()), "/dev/shm");
  const std::pair<const char*, const char*> links[] = {
      {"ptmx", "pts/ptmx"},           {"fd", "/proc/self/fd"},         {"stdin", "/proc/self/fd/0"},
      {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"}};
  for (const auto& [name, to] : links) {
    if (::symlinkat(to, dev_fd, name) != 0) {
      return Status::from_errno(errno, std::string("symlinkat(\"/dev/") + name + "\")");
    }
  }
  // Complete: nothing more may be created in /dev itself (its devices, devpts and /dev/shm are mounts of their own).
  return mounts::set_attributes(dev_fd, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false)
      .with_context("/dev read-only");
}

Status mount_fresh_proc(int target_fd) {
  // Read-only whole: nothing in /proc is for the sandbox to write (Landlock says the same where the kernel has it).
  auto proc = mounts::new_filesystem("proc", {},
                                     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  if (!proc.is_ok()) return proc.status();
  OI_TRY(mounts::attach(proc->get(), target_fd));
  // Kernel tunables and the sysrq trigger: read-only over themselves too, as bubblewrap does (a second lock, should
  // the mount above ever be made writable).
  for (const char* name : {"sys", "sysrq-trigger", "irq", "bus"}) {
    OI_TRY(read_only_over_itself(proc->get(), name));
  }
  return Status::ok();
}

Status bind_host_proc(const std::string& source, int target_fd) {
  auto host = mounts::open_host_path(source);
  if (!host.is_ok()) return host.status();
  auto tree = mounts::clone_tree(host->get(), true);
  if (!tree.is_ok()) return tree.status();
  OI_TRY(mounts::set_attributes(tree->get(),
                                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, true));
  return mounts::attach(tree->get(), target_fd);
}

}  // namespace oishell
