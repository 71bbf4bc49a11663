// createWarrant's `time` option: the process's time that a waiting approval polls on, a resume
// waits for a lease on, and loops() tells a live lease from a lapsed one by. On warrant/testing's
// manual clock each happens when the test advances it, and not before.
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  createWarrant,
  type ModelFunction,
  type Warrant,
  WarrantError,
  type WarrantEvent,
} from "../../src/index.js";
import { fakeSandbox, type ManualClock, manualClock, memoryStore } from "../../src/testing.js";
import { waitFor } from "../helpers/wait-for.js";
import { accept, fixtures, plan, result, turn } from "../runtime/harness.js";

const POLL_MS = 1000;
const TTL_MS = 30_000;

function answers(...turns: readonly unknown[]): ModelFunction {
  let next = 0;
  return async () => {
    const answer = turns[next++];
    if (answer === undefined) throw new WarrantError("model/script-exhausted", "no answer left");
    return answer as never;
  };
}

/** Lets every promise chain started so far run (a turn of the event loop, not a delay). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

async function waitingWarrant(time: ManualClock, events: WarrantEvent[]): Promise<Warrant> {
  return createWarrant({
    store: memoryStore(),
    models: {
      implementer: answers(turn("Plan", plan("good-fix"))),
      reviewer: answers(accept),
      summarizer: answers(result),
    },
    sandbox: fakeSandbox(),
    // The pack asks the operator to admit each run: the drive waits, polling for the act.
    approver: "wait",
    signer: "none",
    time,
    pollIntervalMs: POLL_MS,
    lease: { ttlMs: TTL_MS, holder: "host-a" },
    onEvent: (e) => events.push(e),
  });
}

describe("createWarrant's time option", () => {
  it("a waiting approval looks for the operator's act again only once the poll interval passed", async () => {
    const time = manualClock();
    const events: WarrantEvent[] = [];
    const warrant = await waitingWarrant(time, events);
    const handle = warrant.run(path.join(fixtures, "operator-admission.task-pack.json"));
    let outcome: unknown;
    handle.result.then(
      (r) => {
        outcome = r;
      },
      (e: unknown) => {
        outcome = e;
      },
    );
    const answered = () => events.filter((e) => e.kind === "approval-answered");
    // Each approval the drive asks for (the admission, then the run's mutation) is posted while it
    // waits, and seen at its next poll.
    const asked: string[] = [];
    for (;;) {
      const next = await waitFor(
        () =>
          outcome !== undefined ||
          events.find(
            (e) => e.kind === "approval-requested" && !asked.includes(`${e.proposalRef} ${e.step}`),
          ),
        { what: "an approval request or the outcome", timeoutMs: 20_000 },
      );
      if (next === true) break;
      if (next.kind !== "approval-requested") throw new Error("not an approval request");
      asked.push(`${next.proposalRef} ${next.step}`);
      // The event's time is the loop's clock, which is `time` unless given apart.
      expect(next.at).toBe(time.now().toISOString());
      // The lease's renewal timer and the approver's poll wait on the clock.
      await waitFor(() => time.pending() === 2, { what: "the poll's sleep", timeoutMs: 20_000 });
      await warrant.approve(next.proposalRef, next.step);
      await settled();
      const before = answered().length;
      await time.advance(POLL_MS - 1);
      expect(answered()).toHaveLength(before);
      await time.advance(1);
      await waitFor(() => answered().length === before + 1, {
        what: "the approval to be seen",
        timeoutMs: 20_000,
      });
      expect(answered()[before]).toMatchObject({ answer: "approved", by: "operator" });
    }
    expect(asked.map((a) => a.split(" ")[1])).toEqual(["admission", "fix-slugify"]);
    expect(outcome).toMatchObject({ status: "stopped", stop: { reason: "succeeded" } });
    expect(time.pending()).toBe(0);
    await warrant.close();
  });

  it("a resume waits for a lease another holds on the process's time, and gives up past waitMs", async () => {
    const time = manualClock();
    const events: WarrantEvent[] = [];
    const warrant = await waitingWarrant(time, events);
    const query = await warrant.open(path.join(fixtures, "operator-admission.task-pack.json"));
    const other = await warrant.store.acquireLease(query, "host-b", TTL_MS, time.now());
    expect(other).toBeDefined();
    // Listed as driven while host-b's lease is live by `time`, stuck once it lapsed.
    expect((await warrant.loops()).map((l) => l.status)).toEqual(["driving"]);
    const waiting = warrant.resume(query, { waitMs: 2000 }).result;
    let settledWith: unknown;
    void waiting.then((r) => {
      settledWith = r;
    });
    // It tries again every 500 ms of `time` (a quarter of the ttl, at most 500 ms).
    const sleeping = () =>
      waitFor(() => time.pending() === 1, { what: "the resume to wait", timeoutMs: 20_000 });
    for (let i = 0; i < 3; i++) {
      await sleeping();
      await time.advance(500);
    }
    await sleeping();
    await time.advance(499);
    expect(settledWith).toBeUndefined();
    await time.advance(1);
    await waitFor(() => settledWith !== undefined, { what: "the resume", timeoutMs: 20_000 });
    expect(settledWith).toMatchObject({ status: "leased-elsewhere" });
    await time.advance(TTL_MS);
    expect((await warrant.loops()).map((l) => l.status)).toEqual(["stuck"]);
    expect(time.pending()).toBe(0);
    await warrant.close();
  });
});
