// Dependency folders and toolchains on every backend and in both modes: a dependency left out of
// the pin is seen by commands as it is on the host, writes under it reach neither the host nor the
// environment's changes (overlay mode) or fail (copy mode: read-only); a toolchain is read-only at
// its own path with its bin/ first on PATH — both reached even under a folder the commands' uid
// cannot walk (the host's root binds them first).
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import type { BackendOptions } from "../../src/adapters/sandbox/managed-environment.js";
import { createUnshareSandbox } from "../../src/adapters/sandbox/unshare-sandbox.js";
import type { Environment, ExecOptions, Sandbox } from "../../src/core/ports/sandbox.js";

const LIMITS: ExecOptions = { timeoutMs: 30_000, maxOutputBytes: 1 << 16 };
const work = mkdtempSync(path.join(tmpdir(), "warrant-host-folders-"));
chmodSync(work, 0o711);
afterAll(() => rmSync(work, { recursive: true, force: true }));
const asRoot = process.getuid?.() === 0;

/** A project under a folder only its owner may walk: its node_modules and a toolchain. */
function project(name: string): { ws: string; toolchain: string } {
  const hidden = path.join(work, name);
  mkdirSync(hidden, { mode: 0o700 });
  chmodSync(hidden, 0o700);
  const ws = path.join(hidden, "ws");
  mkdirSync(path.join(ws, "src"), { recursive: true });
  writeFileSync(path.join(ws, "src/a.js"), "export const a = 1;\n");
  mkdirSync(path.join(ws, "node_modules/dep"), { recursive: true });
  writeFileSync(path.join(ws, "node_modules/dep/index.js"), "module.exports = 'dep';\n");
  // A package's program, linked from node_modules/.bin as npm links it.
  writeFileSync(
    path.join(ws, "node_modules/dep/cli.js"),
    "#!/usr/bin/env node\nconsole.log('dep cli');\n",
    {
      mode: 0o755,
    },
  );
  mkdirSync(path.join(ws, "node_modules/.bin"));
  symlinkSync("../dep/cli.js", path.join(ws, "node_modules/.bin/dep-cli"));
  // The commands' own files, as a user's node_modules are theirs (as root: the uid they run as).
  if (asRoot) execFileSync("chown", ["-R", "65534:65534", path.join(ws, "node_modules")]);
  const toolchain = path.join(hidden, "tools/mytool-1.0");
  mkdirSync(path.join(toolchain, "bin"), { recursive: true });
  writeFileSync(path.join(toolchain, "bin/mytool"), '#!/bin/sh\necho "mytool says $1"\n', {
    mode: 0o755,
  });
  return { ws, toolchain };
}

function make(backend: "bwrap" | "unshare", options: BackendOptions): Sandbox {
  return backend === "bwrap" ? createBwrapSandbox(options) : createUnshareSandbox(options);
}

function freshRoot(): string {
  const d = mkdtempSync(path.join(work, "envs-"));
  chmodSync(d, 0o711);
  return d;
}

async function sh(env: Environment, script: string) {
  return env.exec(["sh", "-c", script], LIMITS);
}

for (const backend of ["bwrap", "unshare"] as const) {
  const why = await probeSandbox(make(backend, { tempRoot: freshRoot() }));
  for (const layers of ["overlay", "copy"] as const) {
    describe.skipIf(why !== undefined)(
      `dependencies and toolchains: ${backend}, ${layers}${why === undefined ? "" : ` (skipped: ${why})`}`,
      () => {
        it("a dependency is the host's folder, never copied; a toolchain is on PATH, read-only", async () => {
          const root = freshRoot();
          const sandbox = make(backend, { tempRoot: root, layers });
          const { ws, toolchain } = project(`${backend}-${layers}`);
          const pin = await sandbox.openBaseline(ws, { dependencies: ["node_modules"] });
          expect(pin.dependencies).toEqual(["node_modules"]);
          // The pin holds an empty mountpoint where the dependency is: nothing of it was copied.
          const [base] = readdirSync(root).filter((n) => n.startsWith("warrant-base-"));
          expect(readdirSync(path.join(root, base as string, "tree/node_modules"))).toEqual([]);
          const env = await sandbox.createEnvironment(pin, { toolchains: [toolchain] });
          try {
            expect(env.mode).toBe(layers);
            const read = await sh(env, "cat node_modules/dep/index.js");
            expect(read.stdout, read.stderr).toBe("module.exports = 'dep';\n");
            const bin = await env.exec(["node_modules/.bin/dep-cli"], LIMITS);
            expect(bin.stdout, bin.stderr).toBe("dep cli\n");
            const tool = await sh(env, 'mytool hi && echo "$PATH"');
            expect(tool.stdout, tool.stderr).toBe(
              `mytool says hi\n${toolchain}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n`,
            );
            const roTool = await sh(env, `touch ${toolchain}/x`);
            expect(roTool.exitCode).not.toBe(0);
            const write = await sh(
              env,
              "echo more >> node_modules/dep/index.js && mkdir -p node_modules/.cache && echo c > node_modules/.cache/x && echo w > src/b.js",
            );
            if (layers === "overlay") {
              expect(write.exitCode, write.stderr).toBe(0);
              const again = await sh(env, "cat node_modules/dep/index.js node_modules/.cache/x");
              expect(again.stdout).toBe("module.exports = 'dep';\nmore\nc\n");
              // Only the workspace's own change counts; the dependency's writes are its layer's.
              const c = await env.changes();
              expect([...c.added, ...c.modified, ...c.deleted].map((d) => d.path)).toEqual([
                "src/b.js",
              ]);
            } else {
              // Copy mode has no overlay: a dependency is read-only.
              expect(write.exitCode).not.toBe(0);
              expect(write.stderr).toMatch(/Read-only file system/);
            }
          } finally {
            expect((await env.destroy()).confirmed).toBe(true);
            await pin.release();
          }
          // The host's folders are as they were.
          expect(readFileSync(path.join(ws, "node_modules/dep/index.js"), "utf8")).toBe(
            "module.exports = 'dep';\n",
          );
          expect(existsSync(path.join(ws, "node_modules/.cache"))).toBe(false);
          expect(existsSync(path.join(toolchain, "x"))).toBe(false);
          expect(readdirSync(root)).toEqual([]);
        });

        it("without dependencies a plain folder is copied whole, and no toolchain is on PATH", async () => {
          const sandbox = make(backend, { tempRoot: freshRoot(), layers });
          const { ws } = project(`${backend}-${layers}-without`);
          const env = await sandbox.createEnvironment(ws);
          try {
            // A plain folder is copied whole: the dependency is there, as a copy.
            expect((await sh(env, "cat node_modules/dep/index.js")).stdout).toBe(
              "module.exports = 'dep';\n",
            );
            expect((await sh(env, "mytool hi")).exitCode).not.toBe(0);
          } finally {
            await env.destroy();
          }
        });

        it.skipIf(layers === "copy")(
          `what commands write under a dependency counts toward the disk limit${layers === "copy" ? " (skipped in copy mode: a dependency is read-only there)" : ""}`,
          async () => {
            const sandbox = make(backend, { tempRoot: freshRoot(), layers });
            const { ws } = project(`${backend}-${layers}-disk`);
            const pin = await sandbox.openBaseline(ws, { dependencies: ["node_modules"] });
            const env = await sandbox.createEnvironment(pin, {
              resources: { diskBytes: 16 << 20 },
            });
            try {
              // Each file under the per-file limit; together past it. Nothing else stops the loop.
              const r = await env.exec(
                [
                  "sh",
                  "-c",
                  "i=0; while :; do head -c 4194304 /dev/zero > node_modules/f$i || exit 9; i=$((i+1)); sleep 0.05; done",
                ],
                LIMITS,
              );
              expect(r.timedOut).toBe(false);
              expect(r.limit).toEqual({ resource: "disk", bytes: 16 << 20, via: "watchdog" });
            } finally {
              await env.destroy();
              await pin.release();
            }
          },
        );

        it("a dependency that is not there, or is a link, is refused when pinning", async () => {
          const sandbox = make(backend, { tempRoot: freshRoot(), layers });
          const { ws } = project(`${backend}-${layers}-missing`);
          await expect(sandbox.openBaseline(ws, { dependencies: [".venv"] })).rejects.toMatchObject(
            { code: "sandbox/dependency-missing" },
          );
          execFileSync("ln", ["-s", "node_modules", path.join(ws, "linked")]);
          await expect(
            sandbox.openBaseline(ws, { dependencies: ["linked"] }),
          ).rejects.toMatchObject({ code: "sandbox/dependency-missing" });
        });
      },
    );
  }
}
