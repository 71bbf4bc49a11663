// A host that dies after making a run's environment but before journaling it (`runStarted`) leaves
// a directory no record names: a resumed host finds it by the run's stable environment name and
// removes it, whether the run then goes on, is cancelled before it starts, or was mid-step.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import type { LedgerRecord, LedgerStore } from "../../src/core/ports/ledger-store.js";
import type { Environment, Sandbox } from "../../src/core/ports/sandbox.js";
import type { RunReportBody, RunStartedBody } from "../../src/runtime/records.js";
import { environmentNameOf } from "../../src/runtime/run-executor.js";
import { demoTurns, type Harness, harness, recordsOf } from "./harness.js";

class Crash extends Error {}

const scripts = {
  implementer: demoTurns("implementer"),
  reviewer: demoTurns("reviewer"),
  summarizer: demoTurns("summarizer"),
};

/**
 * A store that dies on the first write holding a record of `kind`, before or after it lands. A dead
 * host cleans nothing up: after the death, the environments it made are never destroyed by it.
 */
function dyingAt(kind: string, when: "before" | "after", dead: { value: boolean }) {
  return (store: LedgerStore): LedgerStore =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== "function") return v;
        if (prop !== "putRecords") return v.bind(target);
        return async (records: readonly LedgerRecord[]) => {
          const dies = records.some((r) => r.kind === kind);
          if (dies && when === "before") {
            dead.value = true;
            throw new Crash(`died before ${kind}`);
          }
          await (v as (r: readonly LedgerRecord[]) => Promise<unknown>).call(target, records);
          if (dies) {
            dead.value = true;
            throw new Crash(`died after ${kind}`);
          }
        };
      },
    });
}

/** The sandbox of a host that may die: once dead, destroying its environments does nothing. */
function undestroyedOnceDead(dead: { value: boolean }): (s: Sandbox) => Sandbox {
  const keptOnceDead = (env: Environment): Environment =>
    new Proxy(env, {
      get(target, prop, receiver) {
        if (prop === "destroy")
          return () => (dead.value ? Promise.resolve({ confirmed: false }) : target.destroy());
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  return (sandbox) =>
    new Proxy(sandbox, {
      get(target, prop, receiver) {
        if (prop === "createEnvironment")
          return async (...args: Parameters<Sandbox["createEnvironment"]>) =>
            keptOnceDead(await target.createEnvironment(...args));
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
}
/** Whether root may mark a file immutable in the temp directory (ext4, xfs, btrfs: yes). */
function immutableFlagWorks(): boolean {
  const probe = path.join(tmpdir(), `warrant-immutable-probe-${process.pid}`);
  try {
    writeFileSync(probe, "x");
    if (spawnSync("chattr", ["+i", probe]).status !== 0) return false;
    spawnSync("chattr", ["-i", probe]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { force: true });
  }
}
const canSetImmutable = immutableFlagWorks();

const envDirs = (h: Harness) => readdirSync(h.envRoot).filter((n) => n.startsWith("warrant-env-"));

/** The first host dies at journaling `kind`; returns it and the leftover's path. */
async function died(kind: string, when: "before" | "after" = "before") {
  const store = new MemoryLedgerStore();
  const dead = { value: false };
  const first = await harness(scripts, {
    store,
    wrapStore: dyingAt(kind, when, dead),
    wrapSandbox: undestroyedOnceDead(dead),
  });
  await expect(first.drive()).rejects.toBeInstanceOf(Crash);
  const admitted = (await store.readFacts(first.query))
    .map((f) => f.fact.step)
    .find((s) => s.kind === "run-admitted");
  expect(admitted).toBeDefined();
  const proposal = admitted?.kind === "run-admitted" ? admitted["proposal/ref"] : "";
  const leftover = path.join(
    first.envRoot,
    `warrant-env-${environmentNameOf(first.query, proposal)}`,
  );
  return { store, first, proposal, leftover };
}

describe("an environment made but never journaled (host died before runStarted)", () => {
  it("is left at the run's stable path, removed on resume, and the run proceeds", async () => {
    const { store, first, proposal, leftover } = await died("runStarted");
    // The dead host's environment: at the stable path, with no record naming it.
    expect(existsSync(path.join(leftover, "workspace"))).toBe(true);
    expect(await recordsOf(first, "runStarted")).toHaveLength(0);

    const second = await harness(scripts, { store });
    const r = await second.drive();
    expect(r.status).toBe("stopped");
    expect(r.document.stop?.reason).toBe("succeeded");
    expect(existsSync(leftover)).toBe(false);
    expect(envDirs(second)).toEqual([]);
    // The run went on in a fresh environment under the same name, journaled this time.
    const started = (await recordsOf(second, "runStarted")).map((x) => x.body as RunStartedBody);
    expect(started.map((b) => b["proposal/ref"])).toContain(proposal);
    expect(started.find((b) => b["proposal/ref"] === proposal)?.["environment/dir"]).toBe(
      path.join(leftover, "workspace"),
    );
    const reports = (await recordsOf(second, "runReport")).map((x) => x.body as RunReportBody);
    const report = reports.find((b) => b["proposal/ref"] === proposal);
    expect(report?.outcome).not.toBe("unknown");
    expect(report?.["environment/destroyed"]).toBe(true);
  });

  it("is removed on resume even when the run never starts again (cancelled meanwhile)", async () => {
    const { store, leftover } = await died("runStarted");
    expect(existsSync(leftover)).toBe(true);
    const second = await harness(scripts, { store });
    await second.ledger.execute(second.query, { op: "cancel" }, second.clock.now());
    const r = await second.drive();
    expect(r.document.stop?.reason).toBe("cancelled");
    // The cancelled run made no environment of its own: only the discard can have removed it.
    expect(await recordsOf(second, "runStarted")).toHaveLength(0);
    expect(existsSync(leftover)).toBe(false);
    expect(envDirs(second)).toEqual([]);
  });

  it("is removed on resume while the loop waits for a renewal after its deadline passed", async () => {
    const { store, leftover } = await died("runStarted");
    const second = await harness(scripts, { store });
    second.advance(24 * 3600_000);
    const r = await second.drive();
    expect(r.status).toBe("blocked");
    expect(existsSync(leftover)).toBe(false);
  });
});

describe("an environment journaled, then the host died", () => {
  it("before its first step: removed, and the run proceeds in a fresh one", async () => {
    const { store, leftover } = await died("runStarted", "after");
    const second = await harness(scripts, { store });
    // The journal names the same stable path.
    const started = (await recordsOf(second, "runStarted")).map((x) => x.body as RunStartedBody);
    expect(started[0]?.["environment/dir"]).toBe(path.join(leftover, "workspace"));
    expect(existsSync(leftover)).toBe(true);
    const r = await second.drive();
    expect(r.document.stop?.reason).toBe("succeeded");
    expect(existsSync(leftover)).toBe(false);
    expect(envDirs(second)).toEqual([]);
  });

  it("mid-step: removed when the run concludes unknown", async () => {
    const { store, leftover } = await died("stepStarted", "after");
    expect(existsSync(leftover)).toBe(true);
    const second = await harness(scripts, { store });
    const r = await second.drive();
    expect(r.document.stop?.reason).toBe("unknown");
    const reports = (await recordsOf(second, "runReport")).map((x) => x.body as RunReportBody);
    expect(reports.map((b) => [b.outcome, b["environment/destroyed"]])).toEqual([
      ["unknown", true],
    ]);
    expect(existsSync(leftover)).toBe(false);
    expect(envDirs(second)).toEqual([]);
  });

  it("mid-step with a tree past PATH_MAX left in it: removed, and the run concludes unknown", async () => {
    const { store, leftover } = await died("stepStarted", "after");
    // What a command may leave: 400 nested directories of 16-byte names (6 800 bytes of path).
    const deep = spawnSync(
      process.execPath,
      [
        "-e",
        'const fs = require("fs"); for (let i = 0; i < 400; i++) { fs.mkdirSync("d123456789abcdef"); process.chdir("d123456789abcdef"); } fs.writeFileSync("leaf", "x"); fs.chmodSync(".", 0o500);',
      ],
      { cwd: leftover },
    );
    expect(deep.status, String(deep.stderr)).toBe(0);
    const second = await harness(scripts, { store });
    const r = await second.drive();
    expect(r.document.stop?.reason).toBe("unknown");
    const reports = (await recordsOf(second, "runReport")).map((x) => x.body as RunReportBody);
    expect(reports.map((b) => [b.outcome, b["environment/destroyed"]])).toEqual([
      ["unknown", true],
    ]);
    expect(existsSync(leftover)).toBe(false);
  });

  it.skipIf(!canSetImmutable)(
    `mid-step with a leftover that cannot be removed: refused, rollback/destroy-unconfirmed${canSetImmutable ? "" : " (skipped: no immutable flag on this file system)"}`,
    async () => {
      const { store, leftover } = await died("stepStarted", "after");
      // An immutable file: not even root may unlink it (a mark the sandbox itself cannot set).
      const pinned = path.join(leftover, "stuck");
      spawnSync("sh", ["-c", 'echo x > "$1" && chattr +i "$1"', "sh", pinned]);
      try {
        const second = await harness(scripts, { store });
        await second.drive();
        const reports = (await recordsOf(second, "runReport")).map((x) => x.body as RunReportBody);
        // The interrupted run's conclusion; the refusal does not stop the loop, which goes on.
        const first = reports[0];
        expect(
          first && [first.outcome, first["refusal/code"], first["environment/destroyed"]],
        ).toEqual(["refused", "rollback/destroy-unconfirmed", false]);
        expect(existsSync(pinned)).toBe(true);
      } finally {
        spawnSync("chattr", ["-i", pinned]);
      }
    },
  );
});
