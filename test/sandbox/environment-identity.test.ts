// An environment is named after its run, whoever drives it: after a takeover the new holder makes
// the run's environment under the same name. The old holder's environment, destroyed later (a
// process frozen past its lease wakes and cleans up), removes only its own directory, never the one
// now at that name.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { removeEnvironmentDir } from "../../src/adapters/sandbox/environment-dir.js";

const LIMITS = { timeoutMs: 30_000, maxOutputBytes: 1 << 16 };
const work = mkdtempSync(path.join(tmpdir(), "warrant-env-identity-"));
chmodSync(work, 0o711);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("removing an environment's directory by the mark it was made with", () => {
  const made = (name: string, mark: string) => {
    const base = path.join(work, name);
    mkdirSync(base);
    writeFileSync(path.join(base, "environment-id"), mark);
    return base;
  };

  it("removes the directory that carries its mark", async () => {
    const base = made("warrant-env-same", "env-a");
    writeFileSync(path.join(base, "f"), "x");
    expect(await removeEnvironmentDir({ base, identity: { mark: "env-a" } })).toEqual({
      confirmed: true,
    });
    expect(existsSync(base)).toBe(false);
  });

  it("leaves another directory made under the same name since: its own is gone", async () => {
    const base = made("warrant-env-replaced", "env-b");
    writeFileSync(path.join(base, "theirs"), "the new holder's");
    expect(await removeEnvironmentDir({ base, identity: { mark: "env-a" } })).toEqual({
      confirmed: true,
    });
    expect(existsSync(path.join(base, "theirs"))).toBe(true);
    rmSync(base, { recursive: true });
  });

  it("confirms a directory already gone; removes by path alone, or one whose mark cannot be read", async () => {
    const base = path.join(work, "warrant-env-gone");
    expect(await removeEnvironmentDir({ base, identity: { mark: "env-a" } })).toEqual({
      confirmed: true,
    });
    mkdirSync(base);
    expect(await removeEnvironmentDir({ base })).toEqual({ confirmed: true });
    expect(existsSync(base)).toBe(false);
    // No mark (a process stopped before it wrote one): nothing says it is another's.
    mkdirSync(base);
    expect(await removeEnvironmentDir({ base, identity: { mark: "env-a" } })).toEqual({
      confirmed: true,
    });
    expect(existsSync(base)).toBe(false);
  });
});

const root = mkdtempSync(path.join(work, "bwrap-"));
chmodSync(root, 0o711);
const baseline = path.join(work, "baseline");
mkdirSync(baseline);
writeFileSync(path.join(baseline, "f.txt"), "baseline\n");
chmodSync(baseline, 0o755);
// Two processes' sandboxes over one temporary folder: the old holder's and the new holder's.
const oldHolder = createBwrapSandbox({ tempRoot: root });
const newHolder = createBwrapSandbox({ tempRoot: root });
const why = await probeSandbox(oldHolder);

describe.skipIf(why !== undefined)(
  `a run's environment made again under its name by a new holder${why === undefined ? "" : ` (skipped: ${why})`}`,
  () => {
    it("is not removed when the old holder destroys its own environment of that name", async () => {
      const old = await oldHolder.createEnvironment(baseline, { name: "run-taken-over" });
      // The new holder discards the leftover and makes the run's environment again.
      expect(await newHolder.discardEnvironment("run-taken-over")).toEqual({ confirmed: true });
      const current = await newHolder.createEnvironment(baseline, { name: "run-taken-over" });
      try {
        expect(current.root).toBe(old.root);
        // The old holder wakes and destroys its environment: its own is gone already.
        expect(await old.destroy()).toEqual({ confirmed: true });
        expect(existsSync(current.root)).toBe(true);
        const r = await current.exec(["cat", "f.txt"], LIMITS);
        expect(r.exitCode, r.stderr).toBe(0);
        expect(r.stdout).toBe("baseline\n");
      } finally {
        expect(await current.destroy()).toEqual({ confirmed: true });
      }
      expect(existsSync(current.root)).toBe(false);
    });
  },
);
