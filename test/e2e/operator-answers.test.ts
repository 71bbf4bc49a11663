// Honest operator answers: `approve`, `deny` and `answer` say `posted` (exit 0) only when their act
// is the one that counts. Racing processes on SQLite and PostgreSQL: one wins, every other exits 1
// with hil/already-answered and the act that counts; an act on a stopped loop is
// loop/already-stopped, on a concluded run loop/already-concluded, and neither is stored.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { LoopCommand } from "../../src/core/loop/types.js";
import { toLedgerRecord } from "../../src/core/records/ledger-record.js";
import { buildProposal } from "../../src/core/records/proposal.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { makeRecord } from "../../src/runtime/records.js";
import { runCli } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const dir = mkdtempSync(path.join(tmpdir(), "warrant-answers-"));
const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "answers");
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (pg.enabled) await schemas.dropAll();
});
let n = 0;

const AGENT = "agent:implementer";
const PASSAGE = `passage:sha256:${"Q".repeat(43)}`;

interface Seeded {
  readonly uri: string;
  readonly query: string;
  readonly run: string;
}

/** A loop waiting on the approval of step `fix` of its run (and on an answer to a question). */
async function seed(uri: string, then: "waiting" | "cancelled" | "concluded"): Promise<Seeded> {
  const query = `query:answers-${++n}`;
  const store = await openStore(uri);
  try {
    const ledger = new LoopLedger(store);
    const now = new Date();
    const proposal = toLedgerRecord(
      "proposal",
      buildProposal({
        query,
        agentId: AGENT,
        passageRef: PASSAGE,
        candidate: {
          hypothesis: "h",
          steps: [
            { id: "look", action: "observe", paths: ["a"] },
            { id: "fix", action: "patch", path: "a", content: "b" },
          ],
        },
        evidence: [],
        createdAt: now.toISOString(),
      }),
    );
    const commands: LoopCommand[] = [
      {
        op: "open",
        query,
        binding: "operator-task-local-binding:answers",
        operator: "node-operator-binding:alice",
        layers: [{ "max/passages": 8, "max/experiments": 2, "max/wall-time-ms": 3_600_000 }],
      },
      { op: "charge-passage", role: "implementer", agent: AGENT, passage: PASSAGE },
      { op: "open-cycle", proposal: proposal.ref },
      { op: "admit-run", proposal: proposal.ref },
    ];
    if (then === "cancelled") commands.push({ op: "cancel" });
    if (then === "concluded") {
      commands.push({
        op: "conclude",
        proposal: proposal.ref,
        execution: `corpus-task-pack-execution:sha256:${"E".repeat(43)}`,
        outcome: "verification-failed",
      });
    }
    for (const c of commands) {
      const d = await ledger.execute(query, c, now, c.op === "open-cycle" ? [proposal] : []);
      expect(d.result).toBe("appended");
    }
    // The implementer's passage also ended with a question (answered by `warrant answer`).
    await store.putRecords([
      makeRecord("passageEnd", query, {
        "query/id": query,
        "passage/ref": PASSAGE,
        role: "implementer",
        "agent/id": AGENT,
        "evidence/digest": `sha256:${"D".repeat(43)}`,
        message: { type: "Question", payload: { question: "which file?" }, paper_ref: null },
        "model/calls": 1,
        "ended-at": now.toISOString(),
      }),
    ]);
    return { uri, query, run: proposal.ref };
  } finally {
    await store.close();
  }
}

async function actsOf(s: Seeded) {
  const store = await openStore(s.uri);
  try {
    return await store.readOperatorActs(s.query);
  } finally {
    await store.close();
  }
}

const stores = [
  { name: "SQLite", enabled: true, uri: () => `sqlite:${path.join(dir, `s-${++n}.db`)}` },
  { name: "PostgreSQL", enabled: pg.enabled, uri: () => schemas.uri() },
];

for (const s of stores) {
  describe.skipIf(!s.enabled)(`operator answers on ${s.name}`, () => {
    it("racing approve and deny processes: one is posted, the others get hil/already-answered and the act that counts", async () => {
      const seeded = await seed(s.uri(), "waiting");
      const kinds = ["approve", "deny", "approve", "deny"];
      const results = await Promise.all(
        kinds.map((k) => runCli([k, seeded.run, "fix", "--store", seeded.uri, "--json"])),
      );
      const winners = results.filter((r) => r.code === 0);
      expect(winners).toHaveLength(1);
      const won = JSON.parse(winners[0]?.stdout ?? "") as Record<string, unknown>;
      expect(Object.keys(won).sort()).toEqual(["message", "ok", "result"]);
      expect(won).toMatchObject({ ok: true, result: "posted" });
      const acts = await actsOf(seeded);
      expect(acts).toHaveLength(1);
      for (const r of results.filter((x) => x.code !== 0)) {
        expect(r.code).toBe(1);
        const out = JSON.parse(r.stdout) as { ok: boolean; code: string; answer: unknown };
        expect(Object.keys(out).sort()).toEqual(["answer", "code", "message", "ok"]);
        expect(out).toMatchObject({ ok: false, code: "hil/already-answered" });
        expect(out.answer).toEqual(acts[0]);
      }
    });

    it("a second answer to the same question gets hil/already-answered with the first", async () => {
      const seeded = await seed(s.uri(), "waiting");
      const [a, b] = await Promise.all(
        ["yes", "no"].map((t) =>
          runCli(["answer", seeded.query, t, "--store", seeded.uri, "--json"]),
        ),
      );
      const outs = [a, b].map((r) => JSON.parse(r?.stdout ?? "") as Record<string, unknown>);
      expect([a?.code, b?.code].sort()).toEqual([0, 1]);
      const lost = outs.find((o) => o.ok === false);
      expect(lost).toMatchObject({ code: "hil/already-answered" });
      const acts = await actsOf(seeded);
      expect(acts).toHaveLength(1);
      expect(lost?.answer).toEqual(acts[0]);
      // Plain output names the act that counts on stderr.
      const again = await runCli(["answer", seeded.query, "maybe", "--store", seeded.uri]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("hil/already-answered");
      expect(again.stderr).toContain(acts[0]?.text ?? "?");
    });

    it("approve, deny and answer on a stopped loop: loop/already-stopped, nothing stored", async () => {
      const seeded = await seed(s.uri(), "cancelled");
      for (const args of [
        ["approve", seeded.run, "fix"],
        ["deny", seeded.run, "fix"],
        ["answer", seeded.query, "yes"],
      ]) {
        const r = await runCli([...args, "--store", seeded.uri, "--json"]);
        expect(r.code).toBe(1);
        expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "loop/already-stopped" });
      }
      expect(await actsOf(seeded)).toEqual([]);
    });

    it("approve of a step whose run is already concluded: loop/already-concluded", async () => {
      const seeded = await seed(s.uri(), "concluded");
      const r = await runCli(["deny", seeded.run, "fix", "--store", seeded.uri, "--json"]);
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: "loop/already-concluded" });
      expect(await actsOf(seeded)).toEqual([]);
    });
  });
}
