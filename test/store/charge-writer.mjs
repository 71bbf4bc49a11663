// A writer process for the store's concurrency and crash tests, run from the BUILT modules in dist/
// (`npx tsc -p tsconfig.build.json` first), so it writes exactly as the shipped code does.
//
//   node charge-writer.mjs race URI QUERY NAME SHARED OWN [LOOPS]
//     prints `ready` once the store is open, waits for a line on stdin, then charges SHARED passages every racer also charges and OWN of
//     its own, in random order; prints one JSON line per command: {passage, result, fact?, code?}.
//     With LOOPS, the same in each of the loops QUERY-l0, QUERY-l1, … at once (each line also
//     names its loop: {query, …}), so the store's appends of several loops wait and go in groups.
//   node charge-writer.mjs stream URI QUERY COUNT [LOOPS]
//     opens QUERY (or LOOPS loops QUERY-l0, QUERY-l1, …, charged concurrently), then charges COUNT
//     passages in each, each with a transcript record in the same append; prints
//     `ack QUERY SEQUENCE PASSAGE` only after the append has committed.
import { openStore } from "../../dist/src/adapters/store/open-store.js";
import { digestOf } from "../../dist/src/core/records/canonical.js";
import { LoopLedger } from "../../dist/src/runtime/loop-ledger.js";

const [mode, uri, query, ...rest] = process.argv.slice(2);
const AGENT = "agent:writer";

function line(text) {
  process.stdout.write(`${text}\n`);
}

function shuffle(xs) {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

async function race(name, shared, own, loops) {
  const store = await openStore(uri, { poolSize: 2 });
  const ledger = new LoopLedger(store);
  const queries =
    loops === undefined ? [query] : Array.from({ length: loops }, (_, i) => `${query}-l${i}`);
  line("ready");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  await Promise.all(
    queries.map(async (q) => {
      const passages = shuffle([
        ...Array.from({ length: shared }, (_, i) => `passage:shared-${i}`),
        ...Array.from({ length: own }, (_, i) => `passage:${name}-${i}`),
      ]);
      const named = loops === undefined ? {} : { query: q };
      for (const passage of passages) {
        const command = { op: "charge-passage", role: "implementer", agent: AGENT, passage };
        const decision = await executeUnderContention(ledger, q, command);
        if (decision.result === "refused") {
          line(
            JSON.stringify({ passage, ...named, result: "refused", code: decision.refusal.code }),
          );
        } else {
          line(JSON.stringify({ passage, ...named, result: decision.result, fact: decision.fact }));
        }
      }
    }),
  );
  await store.close();
}

/**
 * LoopLedger gives up with store/contention after a bounded run of lost appends; each loss is
 * another racer's committed fact, so trying the command again always makes progress.
 */
async function executeUnderContention(ledger, q, command) {
  for (;;) {
    try {
      return await ledger.execute(q, command, new Date());
    } catch (e) {
      if (e?.code !== "store/contention") throw e;
      line(JSON.stringify({ contention: command.passage }));
    }
  }
}

async function openLoop(ledger, q) {
  const open = await ledger.execute(
    q,
    {
      op: "open",
      query: q,
      binding: "operator-task-local-binding:crash",
      operator: "node-operator-binding:alice",
      layers: [{ "max/passages": 1000, "max/experiments": 1, "max/wall-time-ms": 3_600_000 }],
    },
    new Date(),
  );
  if (open.result === "refused") throw new Error(open.refusal.message);
}

async function charges(ledger, q, count) {
  for (let i = 1; i <= count; i++) {
    const passage = `passage:p${i}`;
    // A few kilobytes, so a kill often lands while pages are being written.
    const body = { query: q, passage, n: i, output: `${passage} `.repeat(400) };
    const record = {
      ref: `passage-transcript:${digestOf(body)}`,
      kind: "transcript",
      query: q,
      body,
    };
    const command = { op: "charge-passage", role: "implementer", agent: AGENT, passage };
    const decision = await ledger.execute(q, command, new Date(), [record]);
    if (decision.result !== "appended") throw new Error(`unexpected ${decision.result}`);
    line(`ack ${q} ${decision.fact.sequence} ${passage}`);
  }
}

async function stream(count, loops) {
  const store = await openStore(uri);
  const ledger = new LoopLedger(store);
  const queries = loops === 1 ? [query] : Array.from({ length: loops }, (_, j) => `${query}-l${j}`);
  for (const q of queries) await openLoop(ledger, q);
  await Promise.all(queries.map((q) => charges(ledger, q, count)));
  await store.close();
}

if (mode === "race")
  await race(
    rest[0],
    Number(rest[1]),
    Number(rest[2]),
    rest[3] === undefined ? undefined : Number(rest[3]),
  );
else if (mode === "stream") await stream(Number(rest[0]), Number(rest[1] ?? 1));
else {
  process.stderr.write("usage: charge-writer.mjs race|stream URI QUERY …\n");
  process.exitCode = 2;
}
