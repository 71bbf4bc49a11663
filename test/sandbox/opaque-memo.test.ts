// Opaque directories (`user.overlay.opaque=y`) read through real GNU tar, and the per-environment
// memo the host view and the change detection share: each directory asked once as it is, asked
// again once its ctime says the attribute may have changed.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDirPath } from "../../src/adapters/sandbox/host-fs.js";
import { OpaqueMemo, opaqueDirs } from "../../src/adapters/sandbox/opaque-dirs.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-opaque-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Sets the overlay's opaque attribute (Node has no setxattr; Python's os module has). */
function markOpaque(dir: string): boolean {
  const r = spawnSync("python3", [
    "-c",
    "import os, sys; os.setxattr(sys.argv[1], 'user.overlay.opaque', b'y')",
    dir,
  ]);
  return r.status === 0;
}

const probe = path.join(work, "probe");
mkdirSync(probe);
const canMark = markOpaque(probe);

describe.skipIf(!canMark)("opaque directories", () => {
  it("the memo asks tar once per directory as it is, and again after its ctime moved", async () => {
    const plain = path.join(work, "plain");
    const opaque = path.join(work, "opaque");
    mkdirSync(plain);
    mkdirSync(opaque);
    expect(markOpaque(opaque)).toBe(true);
    // The real tar, behind a script that counts its runs.
    const runs = path.join(work, "runs");
    writeFileSync(runs, "");
    const tar = path.join(work, "tar");
    const real = spawnSync("sh", ["-c", "command -v tar"]).stdout.toString().trim();
    writeFileSync(tar, `#!/bin/sh\necho run >> ${runs}\nexec ${real} "$@"\n`);
    chmodSync(tar, 0o755);
    const count = () => readFileSync(runs, "utf8").split("\n").filter(Boolean).length;
    const fds = [openDirPath(plain), openDirPath(opaque)];
    try {
      expect(await opaqueDirs(fds, tar)).toEqual([false, true]);
      expect(count()).toBe(1);
      const memo = new OpaqueMemo(tar);
      expect(await memo.opaque(fds)).toEqual([false, true]);
      expect(count()).toBe(2);
      // Known as they are: tar is not run again, in any order or number.
      expect(await memo.opaque([fds[1] as number, fds[0] as number, fds[1] as number])).toEqual([
        true,
        false,
        true,
      ]);
      expect(count()).toBe(2);
      // Marking a directory changes its ctime: it is read again, and only it.
      await new Promise((r) => setTimeout(r, 20));
      expect(markOpaque(plain)).toBe(true);
      expect(await memo.opaque(fds)).toEqual([true, true]);
      expect(count()).toBe(3);
      expect(await memo.opaque([])).toEqual([]);
      expect(count()).toBe(3);
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  });
});
