// Killing a stream writer (charge-writer.mjs) with SIGKILL after a chosen number of acknowledged
// charges, and checking what it left: used by crash.test.ts and crash.long.test.ts.
import { expect } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { checkStoredLoop } from "../../src/core/loop/check.js";
import type { LedgerRecord } from "../../src/core/loop/ledger-store.js";
import { digestOf } from "../../src/core/records/canonical.js";
import { startWriter } from "./writers.js";

/** The transcript ref the writer stores with passage n (charge-writer.mjs builds the same body). */
function transcriptRef(query: string, n: number): string {
  const passage = `passage:p${n}`;
  return `passage-transcript:${digestOf({ query, passage, n, output: `${passage} `.repeat(400) })}`;
}

interface Kill {
  readonly query: string;
  readonly killAfter: number;
  /** Acknowledged charges: passage number → sequence. */
  readonly acked: ReadonlyMap<number, number>;
}

async function killOnce(uri: string, query: string, killAfter: number): Promise<Kill> {
  const writer = startWriter(["stream", uri, query, "500"]);
  const acks = (lines: readonly string[]) => lines.filter((l) => l.startsWith("ack ")).length;
  await writer.waitFor((lines) => acks(lines) >= killAfter);
  writer.child.kill("SIGKILL");
  const exit = await writer.exited;
  expect(exit.signal, exit.stderr).toBe("SIGKILL");
  const acked = new Map<number, number>();
  for (const l of writer.lines) {
    const m = /^ack (\d+) passage:p(\d+)$/.exec(l);
    if (m !== null) acked.set(Number(m[2]), Number(m[1]));
  }
  return { query, killAfter, acked };
}

async function checkAfterKill(uri: string, kill: Kill): Promise<void> {
  const store = await openStore(uri);
  try {
    const stored = await store.readFacts(kill.query);
    const list = await store.listRecords(kill.query);
    const records = new Map<string, LedgerRecord>(list.map((r) => [r.ref, r]));
    const check = checkStoredLoop(kill.query, stored, records, new Date());
    expect(check.ok ? [] : check.errors, `kill after ${kill.killAfter}`).toEqual([]);
    const charged = new Map<number, number>();
    for (const s of stored) {
      if (s.fact.step.kind !== "passage-charged") continue;
      const n = Number(s.fact.step["passage/ref"].slice("passage:p".length));
      charged.set(n, s.fact.sequence);
      // Each charge has its record…
      expect(records.has(transcriptRef(kill.query, n)), `record of passage ${n}`).toBe(true);
    }
    // …and no record is without its charge.
    expect(list).toHaveLength(charged.size);
    // Every acknowledged charge is there, at the sequence acknowledged.
    for (const [n, sequence] of kill.acked) expect(charged.get(n)).toBe(sequence);
    expect(charged.size).toBeGreaterThanOrEqual(kill.acked.size);
    expect(stored.map((s) => s.fact.sequence)).toEqual(stored.map((_, i) => i + 1));
    if (process.env.WARRANT_TEST_VERBOSE) {
      process.stderr.write(
        `kill after ${kill.killAfter}: acked ${kill.acked.size}, stored ${charged.size}\n`,
      );
    }
  } finally {
    await store.close();
  }
}

/** `times` writers, each on its own loop, each killed after 1..maxAcks acknowledgements. */
export async function killRepeatedly(uri: string, times: number, maxAcks: number): Promise<void> {
  const kills: Kill[] = [];
  for (let i = 0; i < times; i++) {
    const killAfter = 1 + Math.floor(Math.random() * maxAcks);
    const kill = await killOnce(uri, `query:crash-${i}`, killAfter);
    kills.push(kill);
    await checkAfterKill(uri, kill);
  }
  // Later kills did not disturb earlier loops.
  for (const kill of kills) await checkAfterKill(uri, kill);
}
