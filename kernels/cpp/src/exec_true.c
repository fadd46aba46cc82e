/* ctxbench-exec-true: the smallest program execve can start, for process.fork_exec. No libc, no
 * dynamic loader: _start makes the exit_group(0) syscall at once, so the kernel measures exec itself
 * rather than a C runtime's start-up. Installed in build/kernels/libexec/ so the agent's catalog scan
 * (regular files in build/kernels/) does not mistake it for a kernel executable. */
void _start(void) {
#if defined(__x86_64__)
  __asm__ volatile("mov $231, %eax\n\txor %edi, %edi\n\tsyscall");
#elif defined(__aarch64__)
  __asm__ volatile("mov x8, #94\n\tmov x0, #0\n\tsvc #0");
#else
#error "ctxbench-exec-true: add this architecture's exit_group syscall"
#endif
  for (;;) {
  }
}
