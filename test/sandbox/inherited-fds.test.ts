// A contained command inherits none of the host process's descriptors beyond what the backend
// gives it: files the host process inherited (here at 3, 9, 40 and 200, as a shell's
// `3>file 9>file 40>file 200>file` would leave them; Node marks the low ones close-on-exec as it
// starts, not the others) are /dev/null to the command, or closed, on both backends, with the
// overlay and without; nothing it writes through them reaches the files. Run in a child process
// (inherited-fds-host.mjs), which inherits the files; a backend this machine lacks is skipped with
// the reason unless WARRANT_REQUIRE_BACKENDS names it.
import { spawnSync } from "node:child_process";
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { coverInherited } from "../../src/adapters/sandbox/inherited-fds.js";
import { repoRoot } from "../helpers/cli.js";

const root = mkdtempSync(path.join(tmpdir(), "warrant-inherited-fds-"));
// The commands' uid searches it to reach the environments made under it.
chmodSync(root, 0o711);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("descriptors the host process inherited", () => {
  it("reach no contained command, on either backend, in either mode", () => {
    const files = [3, 9, 40, 200].map((n) => path.join(root, `host-${n}.txt`));
    const fds = files.map((f) => openSync(f, "w"));
    const stdio: (number | "ignore" | "pipe")[] = ["ignore", "pipe", "pipe"];
    [3, 9, 40, 200].forEach((n, i) => {
      while (stdio.length <= n) stdio.push("ignore");
      stdio[n] = fds[i] as number;
    });
    let r: ReturnType<typeof spawnSync>;
    try {
      r = spawnSync(
        process.execPath,
        [
          path.join(repoRoot, "test/sandbox/inherited-fds-host.mjs"),
          path.join(repoRoot, "dist"),
          root,
          process.env.WARRANT_REQUIRE_BACKENDS ?? "",
        ],
        { encoding: "utf8", stdio, timeout: 180_000 },
      );
    } finally {
      for (const fd of fds) closeSync(fd);
    }
    expect(r.status, String(r.stderr)).toBe(0);
    const out = JSON.parse(String(r.stdout)) as Record<string, unknown> & {
      inheritable: number[];
    };
    // The child did inherit them: the ones Node leaves as they are are inheritable in it.
    expect(out.inheritable).toEqual(expect.arrayContaining([40, 200]));
    let ran = 0;
    for (const name of ["bwrap-overlay", "bwrap-copy", "unshare-overlay", "unshare-copy"]) {
      const report = out[name] as { skipped?: string; exit?: number; stdout?: string };
      if (report.skipped !== undefined) continue;
      ran++;
      expect(report, name).toMatchObject({ exit: 0 });
      for (const n of [3, 9, 40, 200]) {
        const line = (report.stdout ?? "").split("\n").find((l) => l.startsWith(`${n} `));
        expect(line === `${n} /dev/null` || line === `${n} closed`, `${name}: ${line}`).toBe(true);
      }
    }
    expect(ran).toBeGreaterThan(0);
    for (const f of files) expect(readFileSync(f, "utf8")).toBe("");
  }, 240_000);

  it("are covered by /dev/null where the spawn does not set them, and only there", () => {
    const devNull = 99;
    expect(coverInherited(["pipe", "pipe", "pipe", "ignore", 7], [1, 3, 4, 6], devNull)).toEqual([
      "pipe",
      "pipe",
      "pipe",
      devNull,
      7,
      "ignore",
      devNull,
    ]);
    expect(coverInherited(["ignore", "pipe", "pipe"], [], devNull)).toEqual([
      "ignore",
      "pipe",
      "pipe",
    ]);
  });
});
