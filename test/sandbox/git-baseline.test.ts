// A git work tree as the baseline: its tracked files (as they are in the work tree) and untracked
// files not ignored, never .git/ nor ignored files; and the baseline an environment was made from
// read back by `readBaseline` after commands changed the environment.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { createUnshareSandbox } from "../../src/adapters/sandbox/unshare-sandbox.js";

const LIMITS = { timeoutMs: 30_000, maxOutputBytes: 1 << 16 };
const work = mkdtempSync(path.join(tmpdir(), "warrant-git-baseline-"));
chmodSync(work, 0o711);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function write(dir: string, rel: string, content: string): void {
  mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  writeFileSync(path.join(dir, rel), content);
}

function repository(name: string): string {
  const dir = path.join(work, name);
  write(dir, ".gitignore", "node_modules/\n*.log\n");
  write(dir, "src/a.js", "committed\n");
  write(dir, "src/gone.js", "tracked, then deleted in the work tree\n");
  write(dir, "node_modules/dep/index.js", "ignored\n");
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: "D",
    GIT_AUTHOR_EMAIL: "d@x",
    GIT_COMMITTER_NAME: "D",
    GIT_COMMITTER_EMAIL: "d@x",
  };
  execFileSync("git", ["init", "-q"], { cwd: dir, env });
  execFileSync("git", ["add", "-A"], { cwd: dir, env });
  execFileSync("git", ["commit", "-qm", "init"], { cwd: dir, env });
  write(dir, "src/a.js", "edited in the work tree\n");
  rmSync(path.join(dir, "src/gone.js"));
  write(dir, "src/new.js", "untracked\n");
  write(dir, "debug.log", "ignored too\n");
  symlinkSync("/etc/passwd", path.join(dir, "src/escape"));
  return dir;
}

for (const backend of ["bwrap", "unshare"] as const) {
  const root = mkdtempSync(path.join(work, `${backend}-`));
  chmodSync(root, 0o711);
  const sandbox =
    backend === "bwrap"
      ? createBwrapSandbox({ tempRoot: root })
      : createUnshareSandbox({ tempRoot: root });
  const why = await probeSandbox(sandbox);
  describe.skipIf(why !== undefined)(
    `a git work tree as the baseline: ${backend}${why === undefined ? "" : ` (skipped: ${why})`}`,
    () => {
      it("holds the work tree's files, untracked ones not ignored, and nothing of .git/ or the ignored", async () => {
        const env = await sandbox.createEnvironment(repository(`${backend}-repo`));
        try {
          const r = await env.exec(["sh", "-c", "find . -type f | sort; cat src/a.js"], LIMITS);
          expect(r.exitCode, r.stderr).toBe(0);
          expect(r.stdout).toBe(
            "./.gitignore\n./src/a.js\n./src/new.js\nedited in the work tree\n",
          );
        } finally {
          await env.destroy();
        }
      });

      it("readBaseline reads the pinned file, not the environment's; nothing outside the baseline", async () => {
        const env = await sandbox.createEnvironment(repository(`${backend}-read`));
        try {
          await env.exec(
            ["sh", "-c", "echo changed > src/a.js && ln -s /etc/passwd src/link"],
            LIMITS,
          );
          const dec = (b: Uint8Array | undefined) =>
            b === undefined ? undefined : new TextDecoder().decode(b);
          expect(dec(await env.readBaseline?.("src/a.js", 1024))).toBe("edited in the work tree\n");
          expect(await env.readBaseline?.("src/a.js", 4)).toBeUndefined();
          expect(await env.readBaseline?.("node_modules/dep/index.js", 1024)).toBeUndefined();
          expect(await env.readBaseline?.("../../etc/passwd", 1 << 20)).toBeUndefined();
          // A baseline symlink out of it is never followed.
          expect(await env.readBaseline?.("src/escape", 1 << 20)).toBeUndefined();
        } finally {
          await env.destroy();
        }
      });
    },
  );
}
