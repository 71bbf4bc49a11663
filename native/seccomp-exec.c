/*
 * warrant-seccomp FILTER COMMAND [ARG...]: load the seccomp filter in FILTER (classic BPF as the
 * kernel reads it, struct sock_filter entries back to back, as seccomp-filter.ts writes it; `-`
 * reads it from stdin) with no_new_privs set, then execute COMMAND. The filter holds for COMMAND and everything it starts;
 * nothing in it can be undone. Exit 125 when the filter cannot be read or loaded (nothing is
 * executed then), 127 when COMMAND cannot be executed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The longest program the kernel loads (BPF_MAXINSNS). */
#define MAX_INSNS 4096

static struct sock_filter program[MAX_INSNS + 1];

static int fail(const char *what, int err) {
  fprintf(stderr, "warrant-seccomp: %s: %s\n", what, strerror(err));
  return 125;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: warrant-seccomp FILTER COMMAND [ARG...]\n");
    return 125;
  }
  int fd = strcmp(argv[1], "-") == 0 ? 0 : open(argv[1], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return fail("cannot open the filter", errno);
  size_t got = 0;
  const size_t room = sizeof program;
  for (;;) {
    ssize_t n = read(fd, (char *)program + got, room - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot read the filter", errno);
    }
    if (n == 0) break;
    got += (size_t)n;
    if (got == room) break;
  }
  if (fd != 0) close(fd);
  if (got == 0 || got % sizeof(struct sock_filter) != 0 || got > MAX_INSNS * sizeof(struct sock_filter))
    return fail("the filter is not a BPF program", EINVAL);
  struct sock_fprog prog = {
    .len = (unsigned short)(got / sizeof(struct sock_filter)),
    .filter = program,
  };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("no_new_privs", errno);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
    return fail("cannot load the filter", errno);
  execvp(argv[2], argv + 2);
  fprintf(stderr, "warrant-seccomp: cannot execute %s: %s\n", argv[2], strerror(errno));
  return 127;
}
