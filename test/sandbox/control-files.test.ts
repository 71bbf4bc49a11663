// Which control files a bwrap command gets bound read-only (control-files.ts): looked up in the
// writable layer, then in the baseline below it wherever the writable layer has nothing at that
// path; a link, a wrong kind or a whiteout is never handed over, and hides the baseline's.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { controlHandles } from "../../src/adapters/sandbox/control-files.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-control-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;

/** A fresh layer with `.git/hooks` (a directory) and `.git/config` (a file) when `full`. */
function layer(full: boolean): string {
  const dir = path.join(work, `layer-${n++}`);
  mkdirSync(dir);
  if (full) {
    mkdirSync(path.join(dir, ".git/hooks"), { recursive: true });
    writeFileSync(path.join(dir, ".git/config"), "[core]\n");
  }
  return dir;
}

/** Each handle's path and the file it is a handle of (by inode), the handles then closed. */
function handed(upper: string, lower: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const open = readdirSync("/proc/self/fd").length;
  const handles = controlHandles(upper, lower);
  // Nothing else it opened stays open.
  expect(readdirSync("/proc/self/fd").length).toBe(open + handles.length);
  for (const h of handles) {
    const ino = fstatSync(h.fd).ino;
    closeSync(h.fd);
    for (const [root, name] of [
      [upper, "upper"],
      [lower, "lower"],
    ] as const) {
      if (root === undefined) continue;
      try {
        if (statSync(path.join(root, h.path)).ino === ino) out[h.path] = name;
      } catch {
        // Not in this layer.
      }
    }
  }
  return out;
}

describe("the control files handed to a bwrap command", () => {
  it("none where neither layer has a .git", () => {
    expect(handed(layer(false), layer(false))).toEqual({});
    expect(handed(layer(false), undefined)).toEqual({});
  });

  it("the baseline's where the writable layer has no .git; the copy's in copy mode", () => {
    expect(handed(layer(false), layer(true))).toEqual({
      ".git/hooks": "lower",
      ".git/config": "lower",
    });
    expect(handed(layer(true), undefined)).toEqual({
      ".git/hooks": "upper",
      ".git/config": "upper",
    });
  });

  it("the writable layer's first, the baseline's for what it does not have", () => {
    const upper = layer(false);
    mkdirSync(path.join(upper, ".git"));
    writeFileSync(path.join(upper, ".git/config"), "[core]\n");
    expect(handed(upper, layer(true))).toEqual({
      ".git/hooks": "lower",
      ".git/config": "upper",
    });
    expect(handed(layer(true), layer(true))).toEqual({
      ".git/hooks": "upper",
      ".git/config": "upper",
    });
  });

  it("a .git that is not a directory in the writable layer hides the baseline's", () => {
    const file = layer(false);
    writeFileSync(path.join(file, ".git"), "gitdir: /elsewhere\n");
    expect(handed(file, layer(true))).toEqual({});
    const link = layer(false);
    symlinkSync(path.join(layer(true), ".git"), path.join(link, ".git"));
    expect(handed(link, layer(true))).toEqual({});
  });

  it("a link or a wrong kind is never handed, and hides the baseline's at that path", () => {
    const upper = layer(false);
    mkdirSync(path.join(upper, ".git"));
    symlinkSync("/etc/passwd", path.join(upper, ".git/config"));
    writeFileSync(path.join(upper, ".git/hooks"), "not a directory\n");
    expect(handed(upper, layer(true))).toEqual({});
    const lowerWrong = layer(false);
    mkdirSync(path.join(lowerWrong, ".git/config"), { recursive: true });
    symlinkSync("/tmp", path.join(lowerWrong, ".git/hooks"));
    expect(handed(layer(false), lowerWrong)).toEqual({});
  });

  it.skipIf(process.getuid?.() !== 0)(
    "a whiteout in the writable layer hides the baseline's (needs root to make one)",
    () => {
      const upper = layer(false);
      mkdirSync(path.join(upper, ".git"));
      execFileSync("mknod", [path.join(upper, ".git/config"), "c", "0", "0"]);
      expect(handed(upper, layer(true))).toEqual({ ".git/hooks": "lower" });
    },
  );
});
