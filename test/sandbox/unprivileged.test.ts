// The host side without root: the same environments, overlay and hostile-tree handling when the
// process making them is an ordinary user (here uid 65534, entered with setpriv). Run as root only
// — a suite that already runs unprivileged exercises this path everywhere else.
import { spawnSync } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/cli.js";

const asRoot = process.getuid?.() === 0;
const root = mkdtempSync(path.join(tmpdir(), "warrant-unprivileged-"));
chownSync(root, 65534, 65534);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(!asRoot)(
  `an unprivileged host${asRoot ? "" : " (skipped: this suite already runs unprivileged)"}`,
  () => {
    it("makes environments in both modes, reads hostile trees and removes them on both backends", () => {
      const r = spawnSync(
        "setpriv",
        [
          "--reuid=65534",
          "--regid=65534",
          "--clear-groups",
          "--",
          process.execPath,
          path.join(repoRoot, "test/sandbox/unprivileged-host.mjs"),
          path.join(repoRoot, "dist"),
          root,
        ],
        { encoding: "utf8", cwd: root, timeout: 120_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as Record<string, Record<string, unknown>>;
      for (const [backend, mode] of [
        ["bwrap", "overlay"],
        ["bwrap", "copy"],
        ["unshare", "overlay"],
        ["unshare", "copy"],
      ]) {
        expect(out[`${backend}-${mode}`], `${backend}, ${mode}`).toEqual({
          uid: 65534,
          mode,
          exec: [0, backend === "bwrap" ? "65534" : "0", ""],
          pipe: "environment/special-file",
          write: true,
          seen: "new.js",
          changes: {
            added: ["src/locked/in/f", "src/pipe", "test/new.js"],
            deleted: ["test/t.js"],
            findings: ["environment/special-file"],
          },
          destroy: { confirmed: true },
        });
      }
    });
  },
);
