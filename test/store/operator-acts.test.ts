// The act that counts: every store keeps the first operator act for a (query, target) and refuses
// the others atomically, telling them the act that counts: in turn, under concurrent calls on
// separate connections, and across processes; a store migrated from version 2 keeps the first of
// the acts it already held per target.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { openPostgresLedgerStore } from "../../src/adapters/store/postgres-ledger-store.js";
import { migrateSqlite } from "../../src/adapters/store/sqlite-ledger-store.js";
import type { LedgerStore, OperatorAct, PostedAct } from "../../src/core/ports/ledger-store.js";
import { repoRoot } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-acts-"));
const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "acts");
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (pg.enabled) await schemas.dropAll();
});
let n = 0;

const Q = "query:acts";
const act = (kind: OperatorAct["kind"], target: string, who = "alice", text?: string) =>
  ({
    query: Q,
    kind,
    target,
    operator: `node-operator-binding:${who}`,
    at: "2026-12-01T10:00:00Z",
    ...(text === undefined ? {} : { text }),
  }) as OperatorAct;

interface Subject {
  readonly name: string;
  readonly enabled: boolean;
  /** A new URI naming fresh, empty storage (undefined for the memory store). */
  fresh(): string | undefined;
}

const subjects: Subject[] = [
  { name: "memory", enabled: true, fresh: () => undefined },
  { name: "sqlite", enabled: true, fresh: () => `sqlite:${path.join(dir, `acts-${++n}.db`)}` },
  { name: "postgres", enabled: pg.enabled, fresh: () => schemas.uri() },
];

const opened: LedgerStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
});
async function open(uri: string | undefined): Promise<LedgerStore> {
  const s = await openStore(uri ?? "memory:", { poolSize: 4 });
  opened.push(s);
  return s;
}

for (const subject of subjects) {
  describe.skipIf(!subject.enabled)(`operator acts: ${subject.name}`, () => {
    it("posts the first act for a target; a later one is not stored and gets the one that counts", async () => {
      const store = await open(subject.fresh());
      const first = act("approve", "run:1 step:1");
      expect(await store.postOperatorAct(first)).toEqual({ posted: true });
      expect(await store.postOperatorAct(act("deny", "run:1 step:1", "bob"))).toEqual({
        posted: false,
        counting: first,
      });
      expect(await store.postOperatorAct(first)).toEqual({ posted: false, counting: first });
      const answer = act("answer", "passage:q1", "bob", "yes");
      expect(await store.postOperatorAct(answer)).toEqual({ posted: true });
      expect(await store.postOperatorAct(act("answer", "passage:q1", "carol", "no"))).toEqual({
        posted: false,
        counting: answer,
      });
      // Another target, another query: their own first acts.
      expect(await store.postOperatorAct(act("deny", "run:1 step:2"))).toEqual({ posted: true });
      expect(
        await store.postOperatorAct({ ...act("deny", "run:1 step:1"), query: "query:other" }),
      ).toEqual({ posted: true });
      expect(await store.readOperatorActs(Q)).toEqual([first, answer, act("deny", "run:1 step:2")]);
    });

    it("concurrent posts on separate connections: exactly one counts, every other is told it", async () => {
      const uri = subject.fresh();
      // The memory store has one storage per instance: its rivals share it.
      const shared = uri === undefined ? await open(undefined) : undefined;
      const stores = await Promise.all(
        Array.from({ length: 6 }, async () => shared ?? (await open(uri))),
      );
      const outcomes = await Promise.all(
        stores.map((s, i) =>
          s.postOperatorAct(act(i % 2 === 0 ? "approve" : "deny", "run:7 step:1", `op${i}`)),
        ),
      );
      const winners = outcomes.filter((o) => o.posted);
      expect(winners).toHaveLength(1);
      const counting = (await stores[0]?.readOperatorActs(Q)) ?? [];
      expect(counting).toHaveLength(1);
      for (const o of outcomes) if (!o.posted) expect(o.counting).toEqual(counting[0]);
    });
  });
}

/** Racing processes, each posting one act for the same target after a common start signal. */
async function raceProcesses(uri: string, count: number): Promise<PostedAct[]> {
  const program = `
    import { openStore } from ${JSON.stringify(path.join(repoRoot, "dist/src/adapters/store/open-store.js"))};
    const [uri, i] = process.argv.slice(1);
    const store = await openStore(uri, { poolSize: 1 });
    process.stdout.write("ready\\n");
    await new Promise((r) => process.stdin.once("data", r));
    const kind = Number(i) % 2 === 0 ? "approve" : "deny";
    const r = await store.postOperatorAct({ query: ${JSON.stringify(Q)}, kind, target: "run:9 step:1",
      operator: "node-operator-binding:p" + i, at: new Date().toISOString() });
    process.stdout.write(JSON.stringify(r) + "\\n");
    await store.close();`;
  const children = Array.from({ length: count }, (_, i) =>
    spawn(process.execPath, ["--input-type=module", "-e", program, uri, String(i)], {
      stdio: ["pipe", "pipe", "inherit"],
    }),
  );
  const lines = children.map((c) => {
    let out = "";
    c.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
    });
    return {
      ready: new Promise<void>((resolve) => {
        const check = () => (out.includes("ready\n") ? resolve() : setTimeout(check, 10));
        check();
      }),
      done: new Promise<PostedAct>((resolve, reject) =>
        c.on("close", (code) =>
          code === 0
            ? resolve(JSON.parse(out.split("\n")[1] ?? "") as PostedAct)
            : reject(new Error(`racer exited ${code}`)),
        ),
      ),
    };
  });
  await Promise.all(lines.map((l) => l.ready));
  for (const c of children) c.stdin.end("go\n");
  return Promise.all(lines.map((l) => l.done));
}

describe("operator acts across processes", () => {
  it("SQLite: of racing processes exactly one act counts", async () => {
    const uri = `sqlite:${path.join(dir, "race.db")}`;
    await (await openStore(uri)).close();
    const outcomes = await raceProcesses(uri, 4);
    expect(outcomes.filter((o) => o.posted)).toHaveLength(1);
    const losers = outcomes.filter((o) => !o.posted);
    expect(new Set(losers.map((o) => JSON.stringify(o.counting))).size).toBe(1);
  });

  it.skipIf(!pg.enabled)("PostgreSQL: of racing processes exactly one act counts", async () => {
    const uri = schemas.uri();
    await (await openStore(uri)).close();
    const outcomes = await raceProcesses(uri, 4);
    expect(outcomes.filter((o) => o.posted)).toHaveLength(1);
    const losers = outcomes.filter((o) => !o.posted);
    expect(new Set(losers.map((o) => JSON.stringify(o.counting))).size).toBe(1);
  });
});

describe("migration of operator acts (version 2 → latest)", () => {
  const rows: readonly OperatorAct[] = [
    act("approve", "run:1 step:1", "alice"),
    act("deny", "run:1 step:1", "bob"),
    act("answer", "passage:q1", "alice", "first"),
    act("answer", "passage:q1", "bob", "second"),
    act("deny", "run:2 step:1", "carol"),
  ];
  const counting = [rows[0], rows[2], rows[4]];

  it("SQLite: the first act per target counts, the later ones are kept but do not", async () => {
    const file = path.join(dir, "v2.db");
    const db = new Database(file);
    migrateSqlite(db, "sqlite:v2", 2);
    const insert = db.prepare(
      "INSERT INTO warrant_operator_acts (query, kind, target, text, operator, at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    for (const a of rows) insert.run(a.query, a.kind, a.target, a.text ?? null, a.operator, a.at);
    db.close();
    const store = await open(`sqlite:${file}`);
    expect(await store.readOperatorActs(Q)).toEqual(counting);
    expect(await store.postOperatorAct(act("approve", "run:2 step:1"))).toEqual({
      posted: false,
      counting: rows[4],
    });
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare("SELECT COUNT(*) AS n FROM warrant_operator_acts").get()).toEqual({ n: 5 });
    raw.close();
  });

  it.skipIf(!pg.enabled)("PostgreSQL: the first act per target counts", async () => {
    const uri = schemas.uri();
    const name = TestSchemas.schemaOf(uri);
    const v2 = await openPostgresLedgerStore(new URL(pg.url).toString(), {
      uri,
      schema: name,
      targetVersion: 2,
    });
    await v2.close();
    for (const a of rows) {
      await schemas.sql(
        `INSERT INTO "${name}".warrant_operator_acts (query, kind, target, text, operator, at) VALUES ($1, $2, $3, $4, $5, $6)`,
        [a.query, a.kind, a.target, a.text ?? null, a.operator, a.at],
      );
    }
    const store = await open(uri);
    expect(await store.readOperatorActs(Q)).toEqual(counting);
    expect(await store.postOperatorAct(act("answer", "passage:q1", "dave", "third"))).toEqual({
      posted: false,
      counting: rows[2],
    });
  });
});
