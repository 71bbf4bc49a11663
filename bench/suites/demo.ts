// The demo end to end, in process: wall time split into the model (scripted passages), sandbox
// start, plan steps, verifier, sandbox destroy and ledger (every store call), on the memory and
// SQLite stores. Medians over repeated loops.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import { demoPackFile } from "../../src/cli/packs.js";
import type { LedgerStore } from "../../src/core/ports/ledger-store.js";
import type { Sandbox } from "../../src/core/ports/sandbox.js";
import { createWarrant } from "../../src/library/create-warrant.js";
import { uriModels } from "../../src/library/uri-models.js";
import type { RunPhase, WarrantEvent } from "../../src/runtime/events.js";
import { median, round } from "../util.js";
import type { BenchSuite } from "./index.js";

type Phase = RunPhase | "model" | "ledger" | "total";

/** Wraps every method of the store so its time is counted as ledger time. */
function timedStore(store: LedgerStore, add: (ms: number) => void): LedgerStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      return async (...args: unknown[]) => {
        const t0 = performance.now();
        try {
          return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          add(performance.now() - t0);
        }
      };
    },
  });
}

async function oneDemo(storeUri: string, sandbox: Sandbox): Promise<Record<Phase, number>> {
  const times: Record<Phase, number> = {
    model: 0,
    "sandbox-start": 0,
    steps: 0,
    verifier: 0,
    "sandbox-destroy": 0,
    ledger: 0,
    total: 0,
  };
  const raw = await openStore(storeUri);
  const store = timedStore(raw, (ms) => {
    times.ledger += ms;
  });
  // Model time is each passage's span, taken from the event stream as the events arrive.
  let passageStarted = 0;
  const observe = (e: WarrantEvent) => {
    if (e.kind === "passage-start") passageStarted = performance.now();
    else if (e.kind === "passage-end") times.model += performance.now() - passageStarted;
    else if (e.kind === "run-phase") times[e.phase] += e.durationMs;
  };
  const warrant = await createWarrant({
    store,
    models: uriModels(),
    sandbox,
    approver: "auto",
    signer: "none",
    telemetry: observe,
  });
  try {
    const t0 = performance.now();
    // The demo's definitions name their scripted models.
    const outcome = await warrant.run(demoPackFile(), { models: {} }).result;
    times.total = performance.now() - t0;
    if (outcome.status !== "stopped" || outcome.stop.reason !== "succeeded")
      throw new Error("the demo did not succeed");
    return times;
  } finally {
    await warrant.close();
    await raw.close();
  }
}

async function medians(storeUri: () => string, repeats: number): Promise<Record<string, number>> {
  const detected = await detectSandbox();
  if (!detected.ok) throw new Error("no containment backend on this host");
  const runs: Record<Phase, number>[] = [];
  await oneDemo(storeUri(), detected.value); // warm-up: module loading, first sandbox
  for (let i = 0; i < repeats; i++) runs.push(await oneDemo(storeUri(), detected.value));
  const phases = Object.keys(runs[0] ?? {}) as Phase[];
  return Object.fromEntries(phases.map((p) => [`${p}Ms`, round(median(runs.map((r) => r[p])), 1)]));
}

export const demoSuite: BenchSuite = {
  name: "demo",
  run: async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-bench-demo-"));
    try {
      let n = 0;
      const repeats = 5;
      return {
        what: "one demo loop (7 passages, 3 cycles, 2 runs in bwrap), in process; medians of 5",
        memory: await medians(() => "memory:", repeats),
        sqlite: await medians(() => `sqlite:${path.join(dir, `ledger-${n++}.db`)}`, repeats),
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
