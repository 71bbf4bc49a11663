// The contract of the Sandbox port (src/core/ports/sandbox.ts) as the runtime uses it: baselines,
// fresh named environments over them, file reads and writes confined to the workspace, the changes
// against the baseline, leftovers discarded, destruction confirmed. Every implementation passes it
// (bwrap and unshare in test/sandbox/backends.test.ts, warrant/testing's fakeSandbox); what only a
// real backend can show (containment, limits, egress) is test/sandbox/containment-contract.ts's.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Environment, Sandbox } from "../../core/ports/sandbox.js";
import type { ContractTestApi } from "./test-api.js";

const text = (s: string) => new TextEncoder().encode(s);
const decoded = (b: Uint8Array) => new TextDecoder().decode(b);

/** A baseline folder with a file at its top and one below. */
function baselineFolder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-contract-baseline-"));
  writeFileSync(path.join(dir, "a.txt"), "alpha\n");
  mkdirSync(path.join(dir, "src"));
  writeFileSync(path.join(dir, "src", "b.txt"), "beta\n");
  return dir;
}

/** Every file under `dir` with its content, by relative path. */
function contents(dir: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel === "" ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) Object.assign(out, contents(dir, p));
    else out[p] = readFileSync(path.join(dir, p), "utf8");
  }
  return out;
}

/** What the groups of cases share: `sandbox` and `baselineDir` are set before the first case. */
interface Cases {
  readonly test: ContractTestApi;
  sandbox: Sandbox | undefined;
  baselineDir: string;
  /** Every environment a case made, destroyed after the last case. */
  readonly made: Environment[];
  /** A fresh environment of the baseline, named `envName` when given. */
  readonly fresh: (envName?: string) => Promise<Environment>;
}

/**
 * Registers the port's contract for `make()`'s sandbox (called once); `undefined` skips it with
 * `skipReason` (no backend works on this host).
 */
export function sandboxContract(
  name: string,
  make: () => Promise<Sandbox | undefined>,
  test: ContractTestApi,
  skipReason = "no sandbox here",
): void {
  const { afterAll, beforeAll, describe } = test;
  describe(`Sandbox contract: ${name}`, () => {
    const made: Environment[] = [];
    const c: Cases = {
      test,
      sandbox: undefined,
      baselineDir: "",
      made,
      fresh: async (envName?: string): Promise<Environment> => {
        if (c.sandbox === undefined) throw new Error(skipReason);
        const env = await c.sandbox.createEnvironment(
          c.baselineDir,
          envName === undefined ? {} : { name: envName },
        );
        made.push(env);
        return env;
      },
    };
    beforeAll(async () => {
      c.sandbox = await make();
      c.baselineDir = baselineFolder();
    });
    afterAll(async () => {
      await Promise.allSettled(made.map((e) => e.destroy()));
      rmSync(c.baselineDir, { recursive: true, force: true });
    });
    environmentCases(c);
    changeAndLifecycleCases(c);
  });
}

/** An environment: its backend and mode, the baseline it holds, writes, refusals and reads. */
function environmentCases(c: Cases): void {
  const { expect, it } = c.test;
  it("names its backend and the mode of its environments", async () => {
    if (c.sandbox === undefined) return;
    expect(typeof c.sandbox.backend).toBe("string");
    expect(c.sandbox.backend.length).toBeGreaterThan(0);
    expect(["overlay", "copy"]).toContain(await c.sandbox.environmentMode());
  });

  it("an environment holds the baseline: reads, snapshot and no changes", async () => {
    if (c.sandbox === undefined) return;
    const env = await c.fresh();
    expect(path.isAbsolute(env.root)).toBe(true);
    const a = await env.readFile("a.txt");
    expect(a.ok && decoded(a.value)).toBe("alpha\n");
    const b = await env.readFile("src/b.txt");
    expect(b.ok && decoded(b.value)).toBe("beta\n");
    expect([...(await env.snapshot()).keys()].sort()).toEqual(["a.txt", "src/b.txt"]);
    const changes = await env.changes();
    expect(changes).toMatchObject({ added: [], modified: [], deleted: [], complete: true });
  });

  it("a pinned baseline gives the same digests as a fresh environment's snapshot", async () => {
    if (c.sandbox === undefined) return;
    const baseline = await c.sandbox.openBaseline(c.baselineDir);
    try {
      const env = await c.sandbox.createEnvironment(baseline);
      c.made.push(env);
      expect(new Map(await env.snapshot())).toEqual(new Map(await baseline.digests()));
    } finally {
      await baseline.release();
    }
  });

  it("writeFile writes inside, and answers a refusal for .. and absolute paths", async () => {
    if (c.sandbox === undefined) return;
    const env = await c.fresh();
    const written = await env.writeFile("src/c.txt", text("gamma\n"));
    expect(written.ok).toBe(true);
    const read = await env.readFile("src/c.txt");
    expect(read.ok && decoded(read.value)).toBe("gamma\n");
    for (const bad of ["../escape.txt", "/etc/escape.txt"]) {
      const refused = await env.writeFile(bad, text("x"));
      expect(refused.ok, bad).toBe(false);
      if (!refused.ok) expect(refused.errors[0]?.code).toBe("workbench/patch-outside-policy");
    }
  });

  it("a missing file is sandbox/not-found; readPart cuts at its limit", async () => {
    if (c.sandbox === undefined) return;
    const env = await c.fresh();
    const missing = await env.readFile("nope.txt");
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.errors[0]?.code).toBe("sandbox/not-found");
    const part = await env.readPart("a.txt", 3);
    expect(part.ok && { text: decoded(part.value.bytes), truncated: part.value.truncated }).toEqual(
      { text: "alp", truncated: true },
    );
    const whole = await env.readPart("a.txt", 100);
    expect(whole.ok && whole.value.truncated).toBe(false);
  });
}

/** Changes against the baseline, independent environments, names, leftovers and destruction. */
function changeAndLifecycleCases(c: Cases): void {
  const { expect, it } = c.test;
  it("changes list what was added, modified (with the baseline's digest) and deleted", async () => {
    if (c.sandbox === undefined) return;
    const env = await c.fresh();
    const before = await env.snapshot();
    await env.writeFile("new.txt", text("new\n"));
    await env.writeFile("a.txt", text("changed\n"));
    expect((await env.removeFile("src/b.txt")).ok).toBe(true);
    const changes = await env.changes();
    expect(changes.complete).toBe(true);
    expect(changes.added.map((e) => e.path)).toEqual(["new.txt"]);
    expect(changes.modified.map((e) => [e.path, e.before])).toEqual([
      ["a.txt", before.get("a.txt")],
    ]);
    expect(changes.deleted).toEqual([{ path: "src/b.txt", digest: before.get("src/b.txt") }]);
    if (env.readBaseline !== undefined)
      expect(decoded((await env.readBaseline("a.txt", 100)) ?? text(""))).toBe("alpha\n");
  });

  it("environments are fresh and independent; the baseline folder is never touched", async () => {
    if (c.sandbox === undefined) return;
    const original = contents(c.baselineDir);
    const one = await c.fresh();
    await one.writeFile("a.txt", text("one\n"));
    const two = await c.fresh();
    const a = await two.readFile("a.txt");
    expect(a.ok && decoded(a.value)).toBe("alpha\n");
    expect(contents(c.baselineDir)).toEqual(original);
  });

  it("a named environment made again replaces the leftover; discardEnvironment confirms", async () => {
    if (c.sandbox === undefined) return;
    const first = await c.fresh("contract-named");
    await first.writeFile("left.txt", text("left over\n"));
    const second = await c.fresh("contract-named");
    expect((await second.readFile("left.txt")).ok).toBe(false);
    expect(await c.sandbox.discardEnvironment("contract-named")).toEqual({ confirmed: true });
    expect(await c.sandbox.discardEnvironment("contract-never-made")).toEqual({ confirmed: true });
  });

  it("refuses a name that is not a safe token (sandbox/invalid-name)", async () => {
    if (c.sandbox === undefined) return;
    const s = c.sandbox;
    await expect(s.createEnvironment(c.baselineDir, { name: "../up" })).rejects.toMatchObject({
      code: "sandbox/invalid-name",
    });
    await expect(s.discardEnvironment("Not A Name")).rejects.toMatchObject({
      code: "sandbox/invalid-name",
    });
  });

  it("destroy confirms, again too; a journaled root is discarded, another path is not", async () => {
    if (c.sandbox === undefined) return;
    const env = await c.fresh("contract-destroyed");
    expect(await env.destroy()).toEqual({ confirmed: true });
    expect(await env.destroy()).toEqual({ confirmed: true });
    const leftover = await c.fresh("contract-leftover");
    expect(await c.sandbox.discardEnvironmentAt(leftover.root)).toEqual({ confirmed: true });
    const elsewhere = mkdtempSync(path.join(tmpdir(), "warrant-contract-other-"));
    try {
      mkdirSync(path.join(elsewhere, "workspace"));
      expect(await c.sandbox.discardEnvironmentAt(path.join(elsewhere, "workspace"))).toEqual({
        confirmed: false,
      });
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
}
