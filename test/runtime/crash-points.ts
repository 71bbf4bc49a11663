// Crash points for the crash-safety tests: the host "dies" at its Nth write to the
// ledger (just before it lands, or just after), then a fresh host resumes over the same ledger. The
// loop ends stopped; nothing is charged twice; no step starts twice; an interrupted run is `unknown`.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import type { LedgerStore } from "../../src/core/ports/ledger-store.js";
import type { RunReportBody, StepStartedBody } from "../../src/runtime/records.js";
import { demoTurns, harness } from "./harness.js";

class Crash extends Error {}

/** A store that throws at its `at`-th write, before or after the write lands. */
function crashingAt(at: number, when: "before" | "after"): (s: LedgerStore) => LedgerStore {
  let writes = 0;
  return (store) =>
    new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== "function") return v;
        if (prop !== "append" && prop !== "putRecords") return v.bind(target);
        return async (...args: unknown[]) => {
          writes++;
          if (writes === at && when === "before") throw new Crash(`crash before write ${at}`);
          const r = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          if (writes === at && when === "after") throw new Crash(`crash after write ${at}`);
          return r;
        };
      },
    });
}

const scripts = {
  implementer: demoTurns("implementer"),
  reviewer: demoTurns("reviewer"),
  summarizer: demoTurns("summarizer"),
};

export async function crashThenResume(at: number, when: "before" | "after") {
  const store = new MemoryLedgerStore();
  let crashed = false;
  try {
    const first = await harness(scripts, { store, wrapStore: crashingAt(at, when) });
    await first.drive();
  } catch (e) {
    if (!(e instanceof Crash)) throw e;
    crashed = true;
  }
  const second = await harness(scripts, { store });
  const result = await second.drive();
  const steps = (await store.readFacts(second.query)).map((f) => f.fact.step);
  const records = await store.listRecords(second.query);
  return { crashed, result, steps, records };
}

export function crashPointSuite(points: readonly number[]): void {
  describe("crash at a chosen write, then resume", () => {
    it.each(points.flatMap((n) => [[n, "before"] as const, [n, "after"] as const]))(
      "write %i, %s it lands",
      async (at, when) => {
        const { result, steps, records } = await crashThenResume(at, when);
        expect(result.status).toBe("stopped");
        expect(["succeeded", "unknown"]).toContain(result.document.stop?.reason);
        const roles = steps.flatMap((s) => (s.kind === "passage-charged" ? [s.role] : []));
        expect(roles.filter((r) => r === "implementer").length).toBeLessThanOrEqual(3);
        expect(roles.filter((r) => r === "reviewer").length).toBeLessThanOrEqual(3);
        expect(roles.filter((r) => r === "summarizer").length).toBeLessThanOrEqual(1);
        expect(steps.filter((s) => s.kind === "cycle-opened").length).toBeLessThanOrEqual(3);
        const started = records
          .filter((r) => r.kind === "stepStarted")
          .map((r) => r.body as StepStartedBody)
          .map((b) => `${b["proposal/ref"]} ${b["step/id"]}`);
        expect(new Set(started).size).toBe(started.length);
        for (const r of records.filter((x) => x.kind === "runReport")) {
          const report = r.body as RunReportBody;
          expect(report.steps.some((s) => s.status === "interrupted")).toBe(
            report.outcome === "unknown",
          );
          expect(report["environment/destroyed"]).toBe(true);
        }
        const concluded = steps.filter((s) => s.kind === "concluded");
        const admitted = steps.filter((s) => s.kind === "run-admitted");
        expect(concluded).toHaveLength(admitted.length);
      },
    );

    it("a crash after a step started concludes that run unknown and stops the loop unknown", async () => {
      // Write 6 is the first run's first step-started record (opened+binding, charge, passage end,
      // cycle+proposal, charge, passage end+review → then admit, run-started, step-started).
      let found = false;
      for (let at = 5; at <= 12 && !found; at++) {
        const { records, result } = await crashThenResume(at, "after");
        const startedBeforeCrash = records.some((r) => r.kind === "stepStarted");
        const unknown = result.document.stop?.reason === "unknown";
        if (unknown) {
          expect(startedBeforeCrash).toBe(true);
          found = true;
        }
      }
      expect(found).toBe(true);
    });
  });
}
