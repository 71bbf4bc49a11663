/*
 * warrant-outer [--keep K] [--netns U,N] GATE JOIN NPROC DATA FSIZE COUNT [TYPE SOURCE TARGET FLAGS OPTIONS]... COMMAND [ARG...]
 * warrant-outer --make-netns
 *
 * What stands outside a bwrap sandbox in overlay mode, as one program (outer-shell.ts has the
 * same steps as a shell script, used where this was not built). With --keep K it first closes
 * every descriptor above K (what the host hands it ends at K; anything else it was left is the
 * host's, and never reaches the command). With GATE 1 it waits for a line on stdin (the host
 * moves it into the environment's memory cgroup meanwhile); with a JOIN file (not `-`) it moves
 * itself into that cgroup by writing 0 there. Either way everything it starts is in the cgroup.
 * It makes a user namespace mapping root to its own uid and gid, or with --netns joins the user
 * namespace open at descriptor U and the network namespace open at N (the environment's, made by
 * --make-netns; refused if N is its own network namespace) and closes both, then makes a mount
 * namespace (mounts private), mounts the COUNT mounts in order (FLAGS: `-` or a comma list
 * of nosuid, nodev, noexec, ro; OPTIONS: `-` or the mount's data), sets RLIMIT_NPROC, RLIMIT_DATA
 * (`-`: left alone) and RLIMIT_FSIZE, soft and hard, on itself, and runs COMMAND as its child with
 * stdin from /dev/null and fd 3 closed. When COMMAND is over it writes `rc N` to fd 3 (N: its exit
 * status, or 128 plus the signal that killed it), waits until stdin has another line or ends (the
 * host reads the mounts through /proc/PID/root meanwhile), and exits with N.
 * Exit 125 when anything before COMMAND fails (COMMAND is not run then); 127 when COMMAND cannot
 * be executed.
 *
 * --make-netns makes an environment's network namespace, empty but for loopback (brought up), in
 * a user namespace mapping root to its own uid and gid; writes `ready INODE` (the network
 * namespace's inode) on stdout and waits until stdin has a line or ends, while the host opens both
 * namespaces through /proc/PID/ns; then exits 0 (125 when a step fails).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* Every descriptor above `keep` closed: close_range(2), or one by one from /proc/self/fd. */
static int close_above(int keep) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0) == 0) return 0;
#endif
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) return -1;
  int own = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    unsigned long long fd;
    if (number(e->d_name, &fd) == 0 && fd > (unsigned long long)keep && (int)fd != own) close((int)fd);
  }
  closedir(d);
  return 0;
}

/* A user namespace of its own with root mapped to the caller's uid and gid, plus `also`. */
static int own_user_namespace(int also) {
  char map[64];
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | also) != 0)
    return fail(also == CLONE_NEWNET ? "cannot make a user and network namespace"
                                     : "cannot make a user and mount namespace",
                NULL, errno);
  if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT)
    return fail("cannot deny setgroups", NULL, errno);
  snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
  if (write_file("/proc/self/uid_map", map) != 0) return fail("cannot map the uid", NULL, errno);
  snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
  if (write_file("/proc/self/gid_map", map) != 0) return fail("cannot map the gid", NULL, errno);
  return 0;
}

/* --make-netns: see the top of this file. */
static int make_netns(void) {
  if (close_above(2) != 0) return fail("cannot close inherited descriptors", NULL, errno);
  if (own_user_namespace(CLONE_NEWNET) != 0) return 125;
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return fail("cannot open a socket", NULL, errno);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strcpy(ifr.ifr_name, "lo");
  if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) return fail("cannot read loopback's flags", NULL, errno);
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) return fail("cannot bring loopback up", NULL, errno);
  close(s);
  struct stat st;
  if (stat("/proc/self/ns/net", &st) != 0) return fail("cannot stat", "/proc/self/ns/net", errno);
  printf("ready %llu\n", (unsigned long long)st.st_ino);
  if (fflush(stdout) != 0) return fail("cannot write to stdout", NULL, errno);
  read_line(0);
  return 0;
}

/* Two descriptors `U,N`, each above 3. */
static int two_fds(const char *s, int *user, int *net) {
  char copy[48];
  if (strlen(s) >= sizeof copy) return -1;
  strcpy(copy, s);
  char *comma = strchr(copy, ',');
  if (comma == NULL) return -1;
  *comma = '\0';
  unsigned long long u, n;
  if (number(copy, &u) != 0 || number(comma + 1, &n) != 0) return -1;
  if (u <= 3 || n <= 3 || u > 65535 || n > 65535 || u == n) return -1;
  *user = (int)u;
  *net = (int)n;
  return 0;
}

/* Join the user namespace at `user`, then the network namespace at `net`, and close both. */
static int join_netns(int user, int net) {
  struct stat own, given;
  if (stat("/proc/self/ns/net", &own) != 0) return fail("cannot stat", "/proc/self/ns/net", errno);
  if (fstat(net, &given) != 0) return fail("not an open network namespace:", "--netns", errno);
  if (own.st_ino == given.st_ino && own.st_dev == given.st_dev)
    return fail("the network namespace given is this process's own", NULL, EINVAL);
  if (setns(user, CLONE_NEWUSER) != 0)
    return fail("cannot join the environment's user namespace", NULL, errno);
  if (setns(net, CLONE_NEWNET) != 0)
    return fail("cannot join the environment's network namespace", NULL, errno);
  close(user);
  close(net);
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
  if (argc == 2 && strcmp(argv[1], "--make-netns") == 0) return make_netns();
  int keep = -1, user = -1, net = -1;
  int a = 1;
  while (a + 1 < argc && strncmp(argv[a], "--", 2) == 0) {
    unsigned long long v;
    if (strcmp(argv[a], "--keep") == 0) {
      if (number(argv[a + 1], &v) != 0 || v < 3 || v > 65535)
        return fail("not a descriptor for --keep:", argv[a + 1], EINVAL);
      keep = (int)v;
    } else if (strcmp(argv[a], "--netns") == 0) {
      if (two_fds(argv[a + 1], &user, &net) != 0)
        return fail("not two descriptors for --netns:", argv[a + 1], EINVAL);
    } else {
      return fail("unknown option", argv[a], EINVAL);
    }
    a += 2;
  }
  if (keep >= 0 && close_above(keep) != 0)
    return fail("cannot close inherited descriptors", NULL, errno);
  if (user >= 0 && (user > keep || net > keep))
    return fail("--netns descriptors must not be above --keep", NULL, EINVAL);
  argv += a - 1;
  argc -= a - 1;
  if (argc < 8) {
    fprintf(stderr,
            "usage: warrant-outer [--keep K] [--netns U,N] GATE JOIN NPROC DATA FSIZE COUNT "
            "[TYPE SOURCE TARGET FLAGS OPTIONS]... COMMAND [ARG...]\n"
            "       warrant-outer --make-netns\n");
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

  if (user >= 0) {
    if (join_netns(user, net) != 0) return 125;
    if (unshare(CLONE_NEWNS) != 0) return fail("cannot make a mount namespace", NULL, errno);
  } else if (own_user_namespace(CLONE_NEWNS) != 0) {
    return 125;
  }
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
