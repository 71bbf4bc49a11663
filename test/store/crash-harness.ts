// Killing a stream writer (charge-writer.mjs) with SIGKILL after a chosen number of acknowledged
// charges, and checking what it left: used by crash.test.ts and crash.long.test.ts.
import { expect } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { checkStoredLoop } from "../../src/core/loop/check.js";
import type { LedgerRecord, LedgerStore } from "../../src/core/ports/ledger-store.js";
import { digestOf } from "../../src/core/records/canonical.js";
import { startWriter } from "./writers.js";

/** The transcript ref the writer stores with passage n (charge-writer.mjs builds the same body). */
function transcriptRef(query: string, n: number): string {
  const passage = `passage:p${n}`;
  return `passage-transcript:${digestOf({ query, passage, n, output: `${passage} `.repeat(400) })}`;
}

interface Kill {
  readonly killAfter: number;
  /** Per loop, the acknowledged charges: passage number → sequence. */
  readonly acked: ReadonlyMap<string, ReadonlyMap<number, number>>;
}

async function killOnce(
  uri: string,
  query: string,
  killAfter: number,
  loops: number,
): Promise<Kill> {
  const writer = startWriter(["stream", uri, query, "500", String(loops)]);
  const acks = (lines: readonly string[]) => lines.filter((l) => l.startsWith("ack ")).length;
  await writer.waitFor((lines) => acks(lines) >= killAfter);
  writer.child.kill("SIGKILL");
  const exit = await writer.exited;
  expect(exit.signal, exit.stderr).toBe("SIGKILL");
  const queries = loops === 1 ? [query] : Array.from({ length: loops }, (_, j) => `${query}-l${j}`);
  const acked = new Map<string, Map<number, number>>(queries.map((q) => [q, new Map()]));
  for (const l of writer.lines) {
    const m = /^ack (\S+) (\d+) passage:p(\d+)$/.exec(l);
    if (m !== null) acked.get(m[1] as string)?.set(Number(m[3]), Number(m[2]));
  }
  return { killAfter, acked };
}

async function checkAfterKill(uri: string, kill: Kill): Promise<void> {
  const store = await openStore(uri);
  try {
    for (const [query, acked] of kill.acked) await checkLoop(store, query, acked, kill.killAfter);
  } finally {
    await store.close();
  }
}

async function checkLoop(
  store: LedgerStore,
  query: string,
  acked: ReadonlyMap<number, number>,
  killAfter: number,
): Promise<void> {
  {
    const stored = await store.readFacts(query);
    const list = await store.listRecords(query);
    const records = new Map<string, LedgerRecord>(list.map((r) => [r.ref, r]));
    const check = checkStoredLoop(query, stored, records, new Date());
    expect(check.ok ? [] : check.errors, `${query}, kill after ${killAfter}`).toEqual([]);
    const charged = new Map<number, number>();
    for (const s of stored) {
      if (s.fact.step.kind !== "passage-charged") continue;
      const n = Number(s.fact.step["passage/ref"].slice("passage:p".length));
      charged.set(n, s.fact.sequence);
      // Each charge has its record…
      expect(records.has(transcriptRef(query, n)), `record of passage ${n}`).toBe(true);
    }
    // …and no record is without its charge.
    expect(list).toHaveLength(charged.size);
    // Every acknowledged charge is there, at the sequence acknowledged.
    for (const [n, sequence] of acked) expect(charged.get(n)).toBe(sequence);
    expect(charged.size).toBeGreaterThanOrEqual(acked.size);
    expect(stored.map((s) => s.fact.sequence)).toEqual(stored.map((_, i) => i + 1));
    if (process.env.WARRANT_TEST_VERBOSE) {
      process.stderr.write(
        `${query}, kill after ${killAfter}: acked ${acked.size}, stored ${charged.size}\n`,
      );
    }
  }
}

/**
 * `times` writers, each on loops of its own (`loops` of them, charged concurrently), each killed
 * after 1..maxAcks acknowledgements in all.
 */
export async function killRepeatedly(
  uri: string,
  times: number,
  maxAcks: number,
  loops = 1,
): Promise<void> {
  const kills: Kill[] = [];
  const run = Math.random().toString(36).slice(2, 8);
  for (let i = 0; i < times; i++) {
    const killAfter = 1 + Math.floor(Math.random() * maxAcks);
    const kill = await killOnce(uri, `query:crash-${run}-${i}`, killAfter, loops);
    kills.push(kill);
    await checkAfterKill(uri, kill);
  }
  // Later kills did not disturb earlier loops.
  for (const kill of kills) await checkAfterKill(uri, kill);
}
