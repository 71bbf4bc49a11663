// A drive that loses its lease stops at once: when the store refuses a write under its fencing
// token (another driver took the loop), or when a renewal finds the lease taken, the drive's
// environment is destroyed (its processes killed), nothing more of it is written, and the caller
// gets store/lease-lost.
//
// The lease runs on a manual clock: it is renewed when the test advances it, never because the
// machine was slow. The drive's environments and the step's process are real: those are waited for,
// each with a deadline.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { LedgerRecord, LedgerStore } from "../../src/core/ports/ledger-store.js";
import { WarrantError } from "../../src/core/result.js";
import { type ManualClock, manualClock } from "../../src/testing.js";
import { waitFor } from "../helpers/wait-for.js";
import { accept, type Harness, harness, plan, result, turn } from "./harness.js";

/** A 300 ms lease, renewed every 100 ms (of the manual clock), held as `worker-a`. */
const WORKER_A = { ttlMs: 300, holder: "worker-a" };
const RENEWAL_MS = 100;

const longStep = turn("Plan", {
  hypothesis: "Wait for the long observation, then read the implementation.",
  steps: [{ id: "wait", action: "observe", profile: "wait-long" }],
  expected_checks: ["tests-pass"],
});

/** The store, with `before` run just before it puts a loop's records of `kind`. */
function beforePut(
  kind: string,
  before: (store: LedgerStore, query: string) => Promise<void>,
): (s: LedgerStore) => LedgerStore {
  return (store) =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== "function") return v;
        if (prop !== "putRecords") return v.bind(target);
        return async (records: readonly LedgerRecord[], ...rest: unknown[]) => {
          const query = records[0]?.query;
          if (query !== undefined && records.some((r) => r.kind === kind))
            await before(target, query);
          return (v as (...a: unknown[]) => Promise<unknown>).call(target, records, ...rest);
        };
      },
    });
}

/** Another driver takes the loop over (its lease long expired by then). */
async function takeOver(store: LedgerStore, query: string, time: ManualClock): Promise<void> {
  const later = new Date(time.now().getTime() + 3_600_000);
  expect(await store.acquireLease(query, "worker-b", 60_000, later)).toBeDefined();
}

/** Another driver takes the loop over just before `kind` is written. */
function takenOverBefore(kind: string, time: ManualClock): (s: LedgerStore) => LedgerStore {
  return beforePut(kind, (store, query) => takeOver(store, query, time));
}

/** Processes running the long step's command (`sleep 613`), by pid, read from /proc. */
function stepProcesses(): string[] {
  return readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8") === "sleep\u0000613\u0000";
    } catch {
      return false;
    }
  });
}

const envDirs = (h: Harness) => readdirSync(h.envRoot).filter((n) => n.startsWith("warrant-env-"));

async function written(h: Harness) {
  return {
    facts: (await h.store.readFacts(h.query)).length,
    records: (await h.store.listRecords(h.query)).map((r) => r.ref),
  };
}

/** Waits until `check` holds: the steps and environments watched are real processes and folders. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  await waitFor(check, { what, timeoutMs: 30_000 });
}

/**
 * Time passes well beyond the lease (a renewal timer left behind would fire): the drive left no
 * timer, and what the abandoned drive could still do it has done.
 */
async function longAfter(time: ManualClock): Promise<void> {
  await time.advance(10 * WORKER_A.ttlMs);
  expect(time.pending()).toBe(0);
}

describe("a drive that loses its lease", () => {
  it("stops when the store refuses its write: no step starts, the environment is destroyed", async () => {
    const time = manualClock();
    const h = await harness(
      { implementer: [longStep], reviewer: [accept] },
      {
        pack: "long-step.task-pack.json",
        wrapStore: takenOverBefore("stepStarted", time),
        lease: WORKER_A,
        time,
      },
    );
    await expect(h.warrant.resume(h.query, { waitMs: 0 }).result).rejects.toMatchObject({
      code: "store/lease-lost",
    });
    expect(h.events).toContainEqual(
      expect.objectContaining({ kind: "lease-lost", code: "store/lease-lost" }),
    );
    const after = await written(h);
    expect((await h.store.listRecords(h.query)).map((r) => r.kind)).toContain("runStarted");
    expect((await h.store.listRecords(h.query)).map((r) => r.kind)).not.toContain("stepStarted");
    await until("the environment to be destroyed", () => envDirs(h).length === 0);
    // The abandoned drive writes nothing more, and worker-b still holds the loop.
    await longAfter(time);
    expect(await written(h)).toEqual(after);
    expect((await h.store.leases()).map((l) => l.holder)).toEqual(["worker-b"]);
  });

  it("stops mid-step when a renewal finds the lease taken: the step's process is killed", async () => {
    const time = manualClock();
    const h = await harness(
      { implementer: [longStep], reviewer: [accept] },
      { pack: "long-step.task-pack.json", lease: WORKER_A, time },
    );
    const driving = h.warrant.resume(h.query, { waitMs: 0 }).result;
    driving.catch(() => undefined);
    await until("the step to start", async () =>
      (await h.store.listRecords(h.query)).some((r) => r.kind === "stepStarted"),
    );
    expect(envDirs(h)).toHaveLength(1);
    // The step's command (the pack's `sleep 613`) runs.
    await until("the step's process", () => stepProcesses().length > 0);
    // A renewal while worker-a holds the lease extends it from now.
    await time.advance(RENEWAL_MS);
    expect((await h.store.leases()).map((l) => [l.holder, l.until.getTime()])).toEqual([
      ["worker-a", time.now().getTime() + WORKER_A.ttlMs],
    ]);
    const before = await written(h);
    // worker-a is frozen past its lease (as far as the store can tell): worker-b takes the loop.
    const later = new Date(time.now().getTime() + 3_600_000);
    expect(await h.store.acquireLease(h.query, "worker-b", 60_000, later)).toBeDefined();
    // The next renewal finds the lease taken.
    await time.advance(RENEWAL_MS);
    await expect(driving).rejects.toMatchObject({ code: "store/lease-lost" });
    expect(h.events).toContainEqual(
      expect.objectContaining({ kind: "lease-lost", code: "store/lease-lost" }),
    );
    // The ten-minute step is killed with its environment.
    await until("the step's process to be killed", () => stepProcesses().length === 0);
    await until("the environment to be destroyed", () => envDirs(h).length === 0);
    await longAfter(time);
    expect(await written(h)).toEqual(before);
    expect((await h.store.listRecords(h.query)).map((r) => r.kind)).not.toContain("execution");
  });

  it("renews a held lease under one token while the drive runs, and releases it at the end", async () => {
    const time = manualClock();
    const t0 = time.now().getTime();
    const seen: { holder: string; token: number; until: number }[] = [];
    // At the start of each passage a renewal period passes, and the lease is looked at.
    const h = await harness(
      { implementer: [turn("Plan", plan("good-fix"))], reviewer: [accept], summarizer: [result] },
      {
        lease: WORKER_A,
        time,
        onEvent: async (e, h) => {
          if (e.kind !== "passage-start") return;
          await time.advance(RENEWAL_MS);
          for (const l of await h.store.leases()) {
            seen.push({ holder: l.holder, token: l.token, until: l.until.getTime() - t0 });
          }
        },
      },
    );
    const r = await h.drive();
    expect(r).toMatchObject({ status: "stopped", document: { stop: { reason: "succeeded" } } });
    // Implementer, reviewer, summarizer: renewed at 100, 200 and 300 ms, each for 300 ms from then.
    expect(seen).toEqual([
      { holder: "worker-a", token: 1, until: 400 },
      { holder: "worker-a", token: 1, until: 500 },
      { holder: "worker-a", token: 1, until: 600 },
    ]);
    expect(await h.store.leases()).toEqual([]);
    // The renewals stopped with the drive.
    expect(time.pending()).toBe(0);
  });

  it("lets a renewal in flight when the drive ends settle before the release", async () => {
    // The timer's first renewal is held until the loop has concluded, so it is in flight when the
    // drive ends (the renewals made before an environment is made or discarded are not held).
    const time = manualClock();
    let calls = 0;
    const slowRenewals = (store: LedgerStore): LedgerStore =>
      new Proxy(store, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver) as unknown;
          if (typeof v !== "function") return v;
          if (prop !== "renewLease") return v.bind(target);
          return async (query: string, ...rest: unknown[]) => {
            calls++;
            if (calls === 1)
              await until("the loop to conclude", async () =>
                (await target.readFacts(query)).some((f) => f.fact.step.kind === "concluded"),
              );
            return (v as (...a: unknown[]) => Promise<unknown>).call(target, query, ...rest);
          };
        },
      });
    const h = await harness(
      { implementer: [turn("Plan", plan("good-fix"))], reviewer: [accept], summarizer: [result] },
      {
        wrapStore: slowRenewals,
        lease: WORKER_A,
        time,
        // A renewal falls due as the implementer starts; it settles only once the loop concluded.
        onEvent: async (e) => {
          if (e.kind === "passage-start" && e.role === "implementer")
            await time.advance(RENEWAL_MS);
        },
      },
    );
    const r = await h.drive();
    expect(r).toMatchObject({ status: "stopped", document: { stop: { reason: "succeeded" } } });
    const renewals = calls;
    expect(renewals).toBeGreaterThanOrEqual(1);
    await longAfter(time);
    expect(calls).toBe(renewals);
    expect(await h.store.leases()).toEqual([]);
    expect(h.events.filter((e) => e.kind === "lease-lost")).toEqual([]);
    // No renewal took the loop again after the release: its next lease gets the next token.
    expect((await h.store.acquireLease(h.query, "worker-b", 1000, new Date()))?.token).toBe(2);
  });

  it("leaves no environment behind when the drive fails otherwise (its store gone)", async () => {
    const storeGone = beforePut("stepStarted", async () => {
      throw new WarrantError("store/unreachable", "the database went away");
    });
    const time = manualClock();
    const h = await harness(
      { implementer: [longStep], reviewer: [accept] },
      { pack: "long-step.task-pack.json", wrapStore: storeGone, lease: WORKER_A, time },
    );
    await expect(h.warrant.resume(h.query, { waitMs: 0 }).result).rejects.toMatchObject({
      code: "store/unreachable",
    });
    expect((await h.store.listRecords(h.query)).map((r) => r.kind)).toContain("runStarted");
    expect(envDirs(h)).toEqual([]);
    expect(await h.store.leases()).toEqual([]);
    expect(time.pending()).toBe(0);
  });
  it("reports a failure after another driver took the loop as the lease lost, not as the failure", async () => {
    // A process frozen past its lease wakes to find what the new holder removed (its environment's
    // folders): the error it meets then is not the drive's failure but the lease's loss.
    const time = manualClock();
    const failsAfterTakeover = beforePut("stepStarted", async (store, query) => {
      await takeOver(store, query, time);
      throw new Error("ENOENT: no such file or directory, open 'upper'");
    });
    const h = await harness(
      { implementer: [longStep], reviewer: [accept] },
      { pack: "long-step.task-pack.json", wrapStore: failsAfterTakeover, lease: WORKER_A, time },
    );
    const failed = h.warrant.resume(h.query, { waitMs: 0 }).result;
    await expect(failed).rejects.toMatchObject({ code: "store/lease-lost" });
    await expect(failed).rejects.toThrow(/ENOENT/);
    expect(envDirs(h)).toEqual([]);
    // worker-b holds the loop still: the abandoned drive released nothing of it.
    expect((await h.store.leases()).map((l) => l.holder)).toEqual(["worker-b"]);
    expect(time.pending()).toBe(0);
  });
});
