/*
 * warrant-outer GATE JOIN NPROC DATA FSIZE COUNT [TYPE SOURCE TARGET FLAGS OPTIONS]... COMMAND [ARG...]
 *
 * What stands outside a bwrap sandbox in overlay mode, as one program (outer-shell.ts has the
 * same steps as a shell script, used where this was not built). With GATE 1 it first waits for a
 * line on stdin (the host moves it into the environment's memory cgroup meanwhile); with a JOIN
 * file (not `-`) it moves itself into that cgroup by writing 0 there. Either way everything it
 * starts is in the cgroup. It makes a user namespace mapping root to its own uid and gid and a
 * mount namespace (mounts private), mounts the COUNT mounts in order (FLAGS: `-` or a comma list
 * of nosuid, nodev, noexec, ro; OPTIONS: `-` or the mount's data), sets RLIMIT_NPROC, RLIMIT_DATA
 * (`-`: left alone) and RLIMIT_FSIZE, soft and hard, on itself, and runs COMMAND as its child with
 * stdin from /dev/null and fd 3 closed. When COMMAND is over it writes `rc N` to fd 3 (N: its exit
 * status, or 128 plus the signal that killed it), waits until stdin has another line or ends (the
 * host reads the mounts through /proc/PID/root meanwhile), and exits with N.
 * Exit 125 when anything before COMMAND fails (COMMAND is not run then); 127 when COMMAND cannot
 * be executed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what, const char *arg, int err) {
  fprintf(stderr, "warrant-outer: %s%s%s: %s\n", what, arg == NULL ? "" : " ", arg == NULL ? "" : arg,
          strerror(err));
  return 125;
}

/* 1 once a whole line was read from fd, 0 at its end or on an error first. */
static int read_line(int fd) {
  char c;
  for (;;) {
    ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    if (c == '\n') return 1;
  }
}

static int write_file(const char *file, const char *text) {
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int err = errno;
  close(fd);
  if (n == (ssize_t)len) return 0;
  errno = n < 0 ? err : EIO;
  return -1;
}

/* A decimal number with nothing around it. */
static int number(const char *s, unsigned long long *out) {
  if (*s < '0' || *s > '9') return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return -1;
  *out = v;
  return 0;
}

static int mount_flags(const char *s, unsigned long *out) {
  *out = 0;
  if (strcmp(s, "-") == 0) return 0;
  char words[128];
  if (strlen(s) >= sizeof words) return -1;
  strcpy(words, s);
  char *save = NULL;
  for (char *w = strtok_r(words, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
    if (strcmp(w, "nosuid") == 0) *out |= MS_NOSUID;
    else if (strcmp(w, "nodev") == 0) *out |= MS_NODEV;
    else if (strcmp(w, "noexec") == 0) *out |= MS_NOEXEC;
    else if (strcmp(w, "ro") == 0) *out |= MS_RDONLY;
    else return -1;
  }
  return 0;
}

static int set_limit(int resource, const char *value, const char *name) {
  unsigned long long v;
  if (number(value, &v) != 0) return fail("not a number for", name, EINVAL);
  struct rlimit r = {.rlim_cur = (rlim_t)v, .rlim_max = (rlim_t)v};
  if (setrlimit(resource, &r) != 0) return fail("cannot set", name, errno);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr,
            "usage: warrant-outer GATE JOIN NPROC DATA FSIZE COUNT [TYPE SOURCE TARGET FLAGS OPTIONS]... "
            "COMMAND [ARG...]\n");
    return 125;
  }
  const char *gate = argv[1], *join = argv[2], *nproc = argv[3], *data = argv[4], *fsize = argv[5];
  unsigned long long count;
  if (number(argv[6], &count) != 0 || count > 64) return fail("not a mount count:", argv[6], EINVAL);
  int first = 7;
  int command = first + (int)count * 5;
  if (command >= argc) return fail("no command after the mounts", NULL, EINVAL);

  if (strcmp(gate, "1") == 0 && !read_line(0))
    return fail("the host closed the gate", NULL, ECANCELED);
  if (strcmp(join, "-") != 0 && write_file(join, "0") != 0)
    return fail("cannot join the memory cgroup", join, errno);

  char map[64];
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
    return fail("cannot make a user and mount namespace", NULL, errno);
  if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT)
    return fail("cannot deny setgroups", NULL, errno);
  snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
  if (write_file("/proc/self/uid_map", map) != 0) return fail("cannot map the uid", NULL, errno);
  snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
  if (write_file("/proc/self/gid_map", map) != 0) return fail("cannot map the gid", NULL, errno);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    return fail("cannot make the mounts private", NULL, errno);

  for (int m = 0; m < (int)count; m++) {
    char **spec = argv + first + m * 5;
    unsigned long flags;
    if (mount_flags(spec[3], &flags) != 0) return fail("unknown mount flags", spec[3], EINVAL);
    const char *options = strcmp(spec[4], "-") == 0 ? NULL : spec[4];
    if (mount(spec[1], spec[2], spec[0], flags, options) != 0)
      return fail("cannot mount", spec[2], errno);
  }

  if (set_limit(RLIMIT_NPROC, nproc, "nproc") != 0) return 125;
  if (set_limit(RLIMIT_FSIZE, fsize, "fsize") != 0) return 125;
  if (strcmp(data, "-") != 0 && set_limit(RLIMIT_DATA, data, "data") != 0) return 125;

  pid_t child = fork();
  if (child < 0) return fail("cannot fork", NULL, errno);
  if (child == 0) {
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0) {
      fail("cannot open /dev/null", NULL, errno);
      _exit(125);
    }
    if (null != 0) close(null);
    close(3);
    execvp(argv[command], argv + command);
    fprintf(stderr, "warrant-outer: cannot execute %s: %s\n", argv[command], strerror(errno));
    _exit(127);
  }
  int status;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return fail("cannot wait for the command", NULL, errno);
  }
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  dprintf(3, "rc %d\n", rc);
  read_line(0);
  return rc;
}
