// Part of the sandbox contract (docs/spec/containment.md: hostile environments): nothing a command
// leaves in its environment can hang, crash or fool the host. One test per hostile shape, each
// through every host operation on the environment — read, patch write, change detection,
// snapshot, removal — and each ending in a confirmed destroy.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { applyPatchStep } from "../../src/adapters/sandbox/apply-patch-step.js";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import type { BackendOptions } from "../../src/adapters/sandbox/managed-environment.js";
import { createUnshareSandbox } from "../../src/adapters/sandbox/unshare-sandbox.js";
import type {
  Environment,
  EnvironmentMode,
  EnvironmentOptions,
  ExecOptions,
  Sandbox,
} from "../../src/core/ports/sandbox.js";
import { checkPlan } from "../../src/core/taskpack/plan-check.js";
import { validPack } from "../taskpack/fixtures.js";

const LIMITS: ExecOptions = { timeoutMs: 60_000, maxOutputBytes: 1 << 16 };
const text = (s: string) => new TextEncoder().encode(s);
/** A name 16 bytes long: 400 of them nested make a path of 6 800 bytes, past PATH_MAX (4 096). */
const DEEP_NAME = "d123456789abcdef";

export interface HostileContext {
  readonly sandbox: () => Sandbox;
  readonly mode: EnvironmentMode;
  /** A fresh environment over the contract's baseline (destroyed after the test). */
  readonly fresh: (opts?: EnvironmentOptions) => Promise<Environment>;
  /** The contract's baseline folder and a host file outside every environment. */
  readonly baseline: () => string;
  readonly outsideFile: () => string;
}

async function run(env: Environment, script: string): Promise<void> {
  const r = await env.exec(["sh", "-c", script], LIMITS);
  expect(r.exitCode, `${script}: ${r.stderr}`).toBe(0);
}

function codeOf(r: { ok: boolean; errors?: readonly { code: string }[] }): string {
  return r.ok ? "ok" : (r.errors?.[0]?.code ?? "?");
}

async function destroyed(env: Environment): Promise<void> {
  expect(await env.destroy()).toEqual({ confirmed: true });
  expect(existsSync(path.dirname(env.root))).toBe(false);
}

function patchStep(file: string, change: Record<string, string>) {
  const admitted = checkPlan(
    {
      hypothesis: "h",
      steps: [
        { id: "o", action: "observe", read: ["src/a.js"] },
        { id: "p", action: "patch", path: file, ...change },
      ],
    },
    validPack(),
  );
  if (!admitted.ok) throw new Error(JSON.stringify(admitted.errors));
  const step = admitted.value.steps[1];
  if (step?.kind !== "patch") throw new Error("not a patch");
  return step;
}

export function hostileTreeContract(ctx: HostileContext): void {
  it("a FIFO is never opened: read, snapshot and changes report it (environment/special-file)", async () => {
    const env = await ctx.fresh();
    await run(env, "mkfifo src/pipe");
    expect(codeOf(await env.readFile("src/pipe"))).toBe("environment/special-file");
    expect(codeOf(await env.readPart("src/pipe", 100))).toBe("environment/special-file");
    const changes = await env.changes();
    expect(changes.added).toEqual([{ path: "src/pipe", digest: "special:fifo" }]);
    expect(changes.findings.map((f) => [f.code, f.path])).toEqual([
      ["environment/special-file", "src/pipe"],
    ]);
    expect(changes.complete).toBe(true);
    expect((await env.snapshot()).get("src/pipe")).toBe("special:fifo");
    await destroyed(env);
  });

  it("a patch onto a FIFO fails at once, never waiting for a reader", async () => {
    const env = await ctx.fresh();
    // The baseline's src/a.js replaced by a FIFO nobody reads.
    await run(env, "rm src/a.js && mkfifo src/a.js && mkfifo src/new.js");
    expect(codeOf(await env.writeFile("src/a.js", text("x\n")))).toBe("environment/special-file");
    const content = await applyPatchStep(env, patchStep("src/new.js", { content: "x\n" }));
    expect(codeOf(content)).toBe("environment/special-file");
    const diff = await applyPatchStep(
      env,
      patchStep("src/a.js", {
        diff: "--- a/src/a.js\n+++ b/src/a.js\n@@ -1 +1 @@\n-export const a = 1;\n+export const a = 2;\n",
      }),
    );
    expect(codeOf(diff)).toBe("environment/special-file");
    const changes = await env.changes();
    expect(changes.modified.map((c) => [c.path, c.digest])).toEqual([["src/a.js", "special:fifo"]]);
    await destroyed(env);
  });

  it("a name that is not UTF-8 is reported escaped and counted as a change, never a crash", async () => {
    const env = await ctx.fresh();
    await run(env, 'echo x > "$(printf "src/bad\\377name")" && mkdir "$(printf "src/d\\376")"');
    await run(env, 'echo y > "$(printf "src/d\\376/f")"');
    const changes = await env.changes();
    expect(changes.added.map((c) => c.path)).toEqual(["src/bad\\xffname", "src/d\\xfe/f"]);
    expect(changes.findings.map((f) => [f.code, f.path])).toEqual([
      ["environment/name-not-utf8", "src/bad\\xffname"],
      ["environment/name-not-utf8", "src/d\\xfe"],
    ]);
    const snap = await env.snapshot();
    expect(snap.get("src/bad\\xffname")).toMatch(/^sha256:/);
    await destroyed(env);
  });

  it("a 3 GiB sparse file is hashed in bounded chunks and read only up to a cap", async () => {
    // A file size past the default disk limit (RLIMIT_FSIZE counts size, not blocks).
    const env = await ctx.fresh({ resources: { diskBytes: 4 * 2 ** 30 } });
    await run(env, "truncate -s 3G src/sparse");
    const part = await env.readPart("src/sparse", 4096);
    expect(part.ok && [part.value.bytes.length, part.value.truncated]).toEqual([4096, true]);
    expect(codeOf(await env.readFile("src/sparse"))).toBe("sandbox/too-large");
    const before = process.memoryUsage().rss;
    // Hashing 3 GiB may take longer than the default 30 s on a loaded machine: this is about
    // chunking, not the time bound (change-bounds.test.ts).
    const changes = await env.changes({ timeMs: 600_000 });
    expect(changes.added).toEqual([
      { path: "src/sparse", digest: expect.stringMatching(/^sha256:/) },
    ]);
    // Streamed: hashing 3 GiB never holds more than a chunk.
    expect(process.memoryUsage().rss - before).toBeLessThan(256 << 20);
    await destroyed(env);
  });

  it("a tree 400 directories deep (a path past PATH_MAX) is walked, read and removed", async () => {
    const env = await ctx.fresh();
    // The shell's cd keeps a logical path that outgrows PATH_MAX; Node's chdir is relative.
    const made = await env.exec(
      [
        "node",
        "-e",
        `const fs = require("fs"); process.chdir("src"); for (let i = 0; i < 400; i++) { fs.mkdirSync("${DEEP_NAME}"); process.chdir("${DEEP_NAME}"); } fs.writeFileSync("leaf", "deep\\n");`,
      ],
      LIMITS,
    );
    expect(made.exitCode, made.stderr).toBe(0);
    const rel = `src/${Array(400).fill(DEEP_NAME).join("/")}/leaf`;
    expect(rel.length).toBeGreaterThan(4096);
    const changes = await env.changes();
    expect(changes.complete).toBe(true);
    expect(changes.added.map((c) => c.path)).toEqual([rel]);
    const read = await env.readFile(rel);
    expect(read.ok && new TextDecoder().decode(read.value)).toBe("deep\n");
    expect((await env.writeFile(rel, text("deeper\n"))).ok).toBe(true);
    expect((await env.snapshot()).has(rel)).toBe(true);
    await destroyed(env);
  });

  it("a 1.5 GB file is read only up to the caller's cap, flagged truncated", async () => {
    const env = await ctx.fresh({ resources: { diskBytes: 2 * 2 ** 30 } });
    await run(env, "truncate -s 1500000000 src/big");
    const part = await env.readPart("src/big", 65536);
    expect(part.ok && [part.value.bytes.length, part.value.truncated]).toEqual([65536, true]);
    const small = await env.readPart("src/a.js", 65536);
    expect(small.ok && small.value.truncated).toBe(false);
    expect(codeOf(await env.readFile("src/big"))).toBe("sandbox/too-large");
    expect(codeOf(await env.readFile("src/a.js", { maxBytes: 5 }))).toBe("sandbox/too-large");
    expect(codeOf(await env.readFile("src/a.js", { maxBytes: 20 }))).toBe("ok");
    await destroyed(env);
  });

  it("a directory left without any permission is still compared and removed", async () => {
    const env = await ctx.fresh();
    await run(
      env,
      "mkdir -p src/locked/in && echo s > src/locked/in/f && chmod 000 src/locked/in && chmod 000 src/locked && chmod 555 src",
    );
    const changes = await env.changes();
    expect(changes.added.map((c) => c.path)).toEqual(["src/locked/in/f"]);
    await destroyed(env);
  });

  it("a file replaced by a symlink between the host's check and its open is refused, never followed", async () => {
    const outside = ctx.outsideFile();
    let swap: (() => Promise<void>) | undefined;
    const sandbox = rebuilt(ctx.sandbox(), ctx.mode, {
      beforeOpen: async () => {
        const s = swap;
        swap = undefined;
        await s?.();
      },
    });
    const env = await sandbox.createEnvironment(ctx.baseline());
    try {
      // The file is the environment's own (in the upper layer) when the host checks it.
      await run(env, "echo changed > src/a.js");
      const link = `rm src/a.js && ln -s '${outside}' src/a.js`;
      swap = () => run(env, link);
      const read = await env.readFile("src/a.js");
      expect(read.ok ? "read it" : read.errors[0]?.detail?.reason).toBe("symlink-race");
      await run(env, "rm src/a.js && echo changed > src/a.js");
      swap = () => run(env, link);
      const write = await env.writeFile("src/a.js", text("pwned\n"));
      expect(write.ok ? "wrote it" : write.errors[0]?.detail?.reason).toBe("symlink-race");
      expect(readFileSync(outside, "utf8")).toBe("outside\n");
      // Afterwards the link is seen for what it is.
      expect((await env.changes()).modified).toEqual([
        {
          path: "src/a.js",
          digest: expect.stringMatching(/^symlink:sha256:/),
          before: expect.stringMatching(/^sha256:/),
        },
      ]);
    } finally {
      await destroyed(env);
    }
  });
}

/** The same backend and mode as `sandbox`, with test hooks. */
export function rebuilt(
  sandbox: Sandbox,
  mode: EnvironmentMode,
  hooks: BackendOptions["hooks"],
): Sandbox {
  const options: BackendOptions = { layers: mode, ...(hooks === undefined ? {} : { hooks }) };
  return sandbox.backend === "bwrap" ? createBwrapSandbox(options) : createUnshareSandbox(options);
}
