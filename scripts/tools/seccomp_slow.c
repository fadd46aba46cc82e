/* seccomp_slow FILTERS -- COMMAND [ARGS...]: run COMMAND with FILTERS seccomp filters stacked on it.
 *
 * A real per-syscall slowdown for `make bench` section `power` (docs/fidelity.md): each filter allows
 * every syscall, but reads the syscall's first argument first, so the kernel cannot cache its verdict per
 * syscall number (seccomp's action cache, Linux 5.11) and runs every filter on every syscall. Work done
 * without syscalls (a function call) is untouched. The filters are inherited across fork and exec, so an
 * agent started under this wrapper runs its kernels under them too; so does `perf bench syscall basic`,
 * the independent loop the bench measures beside.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: seccomp_slow FILTERS -- COMMAND [ARGS...]\n");
        return 2;
    }
    char *end = NULL;
    long filters = strtol(argv[1], &end, 10);
    if (*end != '\0' || filters < 0 || filters > 1000) {
        fprintf(stderr, "seccomp_slow: FILTERS must be 0..1000, got %s\n", argv[1]);
        return 2;
    }
    struct sock_filter insns[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(insns) / sizeof(insns[0]), .filter = insns};
    if (filters > 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        fprintf(stderr, "seccomp_slow: PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
        return 3;
    }
    for (long i = 0; i < filters; i++) {
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
            fprintf(stderr, "seccomp_slow: filter %ld: %s\n", i + 1, strerror(errno));
            return 3;
        }
    }
    execvp(argv[3], argv + 3);
    fprintf(stderr, "seccomp_slow: exec %s: %s\n", argv[3], strerror(errno));
    return 3;
}
