#pragma once
// A system call without libc: the result or -errno, and errno untouched. For code that runs where libc's
// thread state is not its own (the cgroup janitor shares the supervisor's address space and thread pointer).
// x86_64 only, like the rest of the sandbox (runtime/inside/seccomp.cc refuses other architectures).
namespace oishell::sys {

[[gnu::always_inline]] inline long raw_syscall(long number, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0,
                                               long a5 = 0, long a6 = 0) {
  long result;
  register long r10 asm("r10") = a4;
  register long r8 asm("r8") = a5;
  register long r9 asm("r9") = a6;
  asm volatile("syscall"
               : "=a"(result)
               : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return result;
}

}  // namespace oishell::sys
