// The resource limits' rules that are data or a small process: where a memory cgroup would be made
// (from /proc/self/cgroup and mountinfo text), the command line that moves a command into it, the
// limits reporter run for real around a command (its limits, its words at and past the file-size
// limit), and the defaults. The disk watchdog is in confinement-unit.test.ts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  cgroupCandidates,
  inCgroup,
  REPORTER_SCRIPT,
  reportedLimit,
  reporterLine,
  resourcesOf,
} from "../../src/adapters/sandbox/resource-limits.js";
import { DEFAULT_RESOURCES } from "../../src/core/ports/sandbox.js";

describe("memory cgroups", () => {
  const mountinfo = [
    "30 25 0:26 / /sys/fs/cgroup/unified rw,relatime shared:5 - cgroup2 cgroup2 rw",
    "35 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup cgroup rw,memory",
    "36 25 0:32 / /sys/fs/cgroup/pids rw,relatime shared:11 - cgroup cgroup rw,pids",
  ].join("\n");
  it("a v2 cgroup comes first, then the v1 memory hierarchy's", () => {
    const procCgroup = "8:pids:/a\n4:memory:/process/x\n0::/user.slice/me\n";
    expect(cgroupCandidates(procCgroup, mountinfo)).toEqual([
      { dir: "/sys/fs/cgroup/unified/user.slice/me", version: 2 },
      { dir: "/sys/fs/cgroup/memory/process/x", version: 1 },
    ]);
  });
  it("a mount whose root is a sub-cgroup (a container's) is resolved below it", () => {
    const inner = "40 25 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
    expect(cgroupCandidates("0::/docker/abc/job\n", inner)).toEqual([
      { dir: "/sys/fs/cgroup/job", version: 2 },
    ]);
    expect(cgroupCandidates("0::/elsewhere\n", inner)).toEqual([]);
  });
  it("a sibling cgroup whose name extends the mount's root is outside it; a name starting .. is not a climb", () => {
    const inner = "40 25 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
    // /docker/abcd is beside /docker/abc, not under it.
    expect(cgroupCandidates("0::/docker/abcd/job\n", inner)).toEqual([]);
    const top = "40 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
    expect(cgroupCandidates("0::/..job\n", top)).toEqual([
      { dir: "/sys/fs/cgroup/..job", version: 2 },
    ]);
  });
});

describe("memory cgroups: which lines of /proc/self/cgroup and mountinfo count", () => {
  const v2 = "30 25 0:26 / /sys/fs/cgroup rw,relatime shared:5 - cgroup2 cgroup2 rw";
  const v1 = "35 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:10 - cgroup cgroup rw,memory";
  it("only the line with id 0 and no controllers is the v2 cgroup", () => {
    expect(cgroupCandidates("1::/x\n", v2)).toEqual([]);
    expect(cgroupCandidates("0:pids:/x\n", v2)).toEqual([]);
    expect(cgroupCandidates("0::/x\n", v2)).toEqual([{ dir: "/sys/fs/cgroup/x", version: 2 }]);
  });
  it("a v1 line counts when memory is one of its controllers, in a mount that carries memory", () => {
    expect(cgroupCandidates("4:cpu,memory:/p\n", v1)).toEqual([
      { dir: "/sys/fs/cgroup/memory/p", version: 1 },
    ]);
    expect(cgroupCandidates("4:memsw,cpu:/p\n", v1)).toEqual([]);
    const noMemory = "35 25 0:31 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,memoryx";
    expect(cgroupCandidates("4:memory:/p\n", noMemory)).toEqual([]);
    // A v1 line is never looked for in a cgroup2 mount, nor a v2 line in a v1 mount.
    expect(cgroupCandidates("4:memory:/p\n", v2)).toEqual([]);
    expect(cgroupCandidates("0::/p\n", v1)).toEqual([]);
  });
  it("a mountinfo line that is not a mount (empty, without its separator, short on either side) is passed over", () => {
    const lines = [
      "",
      "30 25 0:26 / /sys/fs/cgroup rw cgroup2 cgroup2 rw",
      "30 25 0:26 / - cgroup2 cgroup2 rw",
      "30 25 0:26 - cgroup2 cgroup2 rw",
      "30 25 0:26 / /sys/fs/cgroup rw -",
      "30 25 0:26 / /sys/fs/cgroup rw - cgroup2",
      "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2",
    ];
    for (const line of lines) {
      expect(cgroupCandidates("0::/x\n", `${line}\n`), JSON.stringify(line)).toEqual([]);
    }
    expect(cgroupCandidates("0::/x\n", `${lines.join("\n")}\n${v2}\n`)).toEqual([
      { dir: "/sys/fs/cgroup/x", version: 2 },
    ]);
  });
  it("an id is the whole number at the start of the line", () => {
    expect(cgroupCandidates("a0::/x\n", v2)).toEqual([]);
    expect(cgroupCandidates("10:memory:/p\n", v1)).toEqual([
      { dir: "/sys/fs/cgroup/memory/p", version: 1 },
    ]);
  });
  it("a v1 cgroup is looked for only in v1 mounts, and only where it lies under the mount's root", () => {
    const v2WithMemory = "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,memory";
    expect(cgroupCandidates("4:memory:/p\n", v2WithMemory)).toEqual([]);
    const rooted = "35 25 0:31 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory";
    expect(cgroupCandidates("4:memory:/elsewhere\n", rooted)).toEqual([]);
    expect(cgroupCandidates("4:memory:/docker/abc/j\n", rooted)).toEqual([
      { dir: "/sys/fs/cgroup/memory/j", version: 1 },
    ]);
  });
  it("skips lines that are not of the format; decodes octal escapes in a mount point", () => {
    const spaced = "30 25 0:26 / /sys/fs/my\\040cgroup rw - cgroup2 cgroup2 rw";
    expect(cgroupCandidates("garbage\n0::/x\n:x\n", `no separator here\n${spaced}\n`)).toEqual([
      { dir: "/sys/fs/my cgroup/x", version: 2 },
    ]);
    // A mount's root with an escape is decoded the same way.
    const rooted = "30 25 0:26 /a\\040b /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
    expect(cgroupCandidates("0::/a b/c\n", rooted)).toEqual([
      { dir: "/sys/fs/cgroup/c", version: 2 },
    ]);
  });
  it("the cgroup that is the mount's root itself is its mount point; its parent is outside", () => {
    const inner = "40 25 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw";
    expect(cgroupCandidates("0::/docker/abc\n", inner)).toEqual([
      { dir: "/sys/fs/cgroup", version: 2 },
    ]);
    expect(cgroupCandidates("0::/docker\n", inner)).toEqual([]);
  });
});

describe("the limits reporter around a command", () => {
  const limits = { memoryBytes: 512 << 20, tmpBytes: 1 << 20, diskBytes: 4096 };
  const work = mkdtempSync(path.join(tmpdir(), "warrant-reporter-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  /** Runs the reporter's command line; its exit status, stdout and what it wrote to fd 3. */
  const run = (cgroup: boolean, script: string) => {
    const line = reporterLine("77", limits, cgroup, ["/bin/sh", "-c", script]);
    const r = spawnSync(line[0] as string, line.slice(1), {
      cwd: work,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    return { status: r.status, out: String(r.stdout), fd3: String(r.output[3] ?? "") };
  };

  it("is the script with nproc, the data limit (- under a cgroup) and the file-size limit", () => {
    expect(reporterLine("9", limits, false, ["a", "b"])).toEqual([
      "/bin/sh",
      "-c",
      REPORTER_SCRIPT,
      "warrant-limits",
      "9",
      String(512 << 20),
      "4096",
      "a",
      "b",
    ]);
    expect(reporterLine("9", limits, true, ["a"])).toEqual([
      "/bin/sh",
      "-c",
      REPORTER_SCRIPT,
      "warrant-limits",
      "9",
      "-",
      "4096",
      "a",
    ]);
  });

  it("passes the command's exit status through and says nothing when no limit was hit", () => {
    const r = run(false, "echo hi; exit 7");
    expect(r).toEqual({ status: 7, out: "hi\n", fd3: "" });
  });

  it("runs the command under the limits: nproc, data (none under a cgroup) and file size", () => {
    const read = (cgroup: boolean) =>
      run(cgroup, "grep -E '^Max (processes|data size|file size)' /proc/self/limits").out;
    const plain = read(false);
    expect(plain).toMatch(new RegExp(`^Max data size +${512 << 20} +${512 << 20} `, "m"));
    expect(plain).toMatch(/^Max file size +4096 +4096 /m);
    expect(plain).toMatch(/^Max processes +77 +77 /m);
    const held = read(true);
    expect(held).not.toMatch(new RegExp(`^Max data size +${512 << 20}`, "m"));
    expect(held).toMatch(/^Max file size +4096 +4096 /m);
  });

  it("says fsize when the command died of the file-size limit, and keeps its status", () => {
    const r = run(false, "head -c 8192 /dev/zero > big");
    expect(r.status).toBe(128 + 25);
    expect(r.fd3).toBe("fsize\n");
    expect(reportedLimit(r.fd3, limits)).toEqual({
      resource: "disk",
      bytes: 4096,
      via: "rlimit-fsize",
    });
  });

  it("a write of exactly the file-size limit is within it", () => {
    const r = run(false, "head -c 4096 /dev/zero > exact");
    expect(r).toMatchObject({ status: 0, fd3: "" });
  });
});

describe("the limits' small rules", () => {
  it("a limit not given is the default's; one given replaces it", () => {
    expect(resourcesOf(undefined)).toEqual(DEFAULT_RESOURCES);
    expect(resourcesOf({ tmpBytes: 5 })).toEqual({ ...DEFAULT_RESOURCES, tmpBytes: 5 });
  });
  it("a command moves itself into its cgroup first; without one it is run as it is", () => {
    const argv = ["python", "-m", "pytest"];
    const plain = inCgroup(undefined, argv);
    expect(plain).toEqual(argv);
    expect(plain).not.toBe(argv);
    const cg = {
      join: "/cg/tasks",
      selfJoin: true,
      version: 1 as const,
      oomKilled: async () => false,
      release: async () => {},
    };
    const line = inCgroup(cg, argv);
    expect(line).toEqual(["/bin/sh", "-c", 'echo 0 > "$0" && exec "$@"', "/cg/tasks", ...argv]);
    // Run for real with a file standing in for the cgroup's file: the shell writes 0 (itself,
    // its only thread) there, and the command then runs in that same process.
    const join = path.join(mkdtempSync(path.join(tmpdir(), "warrant-join-")), "tasks");
    const r = spawnSync("/bin/sh", ["-c", line[2] as string, join, "/bin/sh", "-c", "echo ran"]);
    expect(String(r.stdout)).toBe("ran\n");
    expect(readFileSync(join, "utf8")).toBe("0\n");
    rmSync(path.dirname(join), { recursive: true });
  });
  it("the reporter's words: fsize before tmp, whole words only", () => {
    expect(reportedLimit("tmp\nfsize\n", DEFAULT_RESOURCES)?.resource).toBe("disk");
    expect(reportedLimit("xfsize tmpx\n", DEFAULT_RESOURCES)).toBeUndefined();
  });
});

describe("the limits reporter's words", () => {
  it("fsize is the disk limit, tmp the /tmp limit, anything else nothing", () => {
    expect(reportedLimit("fsize\n", DEFAULT_RESOURCES)).toEqual({
      resource: "disk",
      bytes: DEFAULT_RESOURCES.diskBytes,
      via: "rlimit-fsize",
    });
    expect(reportedLimit("tmp\n", DEFAULT_RESOURCES)).toEqual({
      resource: "tmp",
      bytes: DEFAULT_RESOURCES.tmpBytes,
      via: "tmpfs",
    });
    expect(reportedLimit("", DEFAULT_RESOURCES)).toBeUndefined();
    expect(reportedLimit("memory\n", DEFAULT_RESOURCES)).toBeUndefined();
  });
});
