#pragma once
// What a block's output says failed on a path: the messages programs print when open, creat, mkdir, unlink... fail
// with EACCES, EPERM, EROFS or ENOENT, read for the path they name. The sandbox's own decision about that path
// (policy/path_verdict.h) then says whether the sandbox did it, which rule, and what would allow it: the `fs.denied`
// event (runtime/executors/denial_explainer.h). Landlock and the mount tree refuse without telling the supervisor,
// so the program's own words are where the path is found.
//
// Recognised, on one line each (the forms of the languages the executors run):
//   Python  PermissionError: [Errno 13] Permission denied: '/home/u/.ssh/id_rsa'
//           OSError: [Errno 30] Read-only file system: 'x'          FileNotFoundError: [Errno 2] ...: "it's"
//   shells  cat: /home/u/.ssh/id_rsa: Permission denied            bash: line 1: /etc/x: Read-only file system
//           sh: 1: cannot create /etc/x: Permission denied         touch: cannot touch '/etc/x': Read-only ...
//           mkdir: cannot create directory ‘/opt/x’: Permission denied
//   Node    Error: EACCES: permission denied, open '/etc/shadow'
//   Ruby    Permission denied @ rb_sysopen - /etc/shadow (Errno::EACCES)
//   R, Java and the rest: a quoted path, or one starting with / ./ ../ ~/ on a line with one of the four errors.
// Pure: no I/O.
#include <string>
#include <string_view>
#include <vector>

namespace oishell::executors {

struct PathFailure {
  std::string path;      // as printed (relative paths stay relative)
  int error = 0;         // EACCES, EPERM, EROFS or ENOENT
  bool writing = false;  // the message says the program was creating, changing or removing (EROFS always is)
};

// Every distinct (path, error) the output names, in order, at most kMaxFailures; lines longer than 4 KiB are not
// read (no program's error line is, and a hostile one must not cost more).
inline constexpr size_t kMaxFailures = 16;
[[nodiscard]] std::vector<PathFailure> scan_path_failures(std::string_view output);

}  // namespace oishell::executors
