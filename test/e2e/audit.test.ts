// `warrant loop check --store` audits a stored loop completely: a loop the demo wrote checks valid,
// and every tampering of its rows (signatures corrupted, removed, swapped or re-keyed, a forged
// execution with its ref, fact and chain recomputed, a review flipped or deleted, a run report or
// changeset deleted, a transcript edited, an approval deleted, a deny by mallory inserted, the last
// fact removed, a rollback past every head, a re-chained edit, a kind column or a row that is not
// JSON) exits 1 naming the first fact it touches. On SQLite and on PostgreSQL, each tampering on a
// fresh copy of the same loop. A key replaced beside the store with everything re-signed is caught
// when the key is pinned and reported as not pinned otherwise; bundles carry their export head.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyDir, keyFileOf } from "../../src/adapters/fs/host-key.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import { chainHash, GENESIS_HASH } from "../../src/core/loop/chain.js";
import type { Fact } from "../../src/core/loop/types.js";
import type { OperatorAct } from "../../src/core/ports/ledger-store.js";
import { base64url, canonicalJson, contentRef } from "../../src/core/records/canonical.js";
import { hostKeyRecord } from "../../src/core/records/host-records.js";
import { operatorActRef } from "../../src/core/records/operator-act.js";
import { kindOfRef, RECORD_KIND_TABLE } from "../../src/core/records/record-kinds.js";
import { publicKeyOf, signRecord } from "../../src/core/records/signature.js";
import { runCli } from "../helpers/cli.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const root = mkdtempSync(path.join(tmpdir(), "warrant-audit-"));
const pgTest = await postgresForTests();
const schemas = new TestSchemas(pgTest.url, "audit");
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  if (pgTest.enabled) await schemas.dropAll();
});

/** The rows of one loop, as SQL sees them, with what each tampering needs to change them. */
interface Db {
  all<T>(sql: string, params?: unknown[]): Promise<T[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
  close(): Promise<void>;
}

function sqliteDb(file: string): Db {
  const db = new Database(file);
  return {
    all: async <T>(sql: string, params: unknown[] = []) => db.prepare(sql).all(...params) as T[],
    run: async (sql, params = []) => {
      db.prepare(sql).run(...params);
    },
    close: async () => {
      db.close();
    },
  };
}

async function postgresDb(schema: string): Promise<Db> {
  const client = new pg.Client({ connectionString: pgTest.url });
  await client.connect();
  await client.query(`SET search_path TO "${schema}"`);
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  return {
    all: async <T>(sql: string, params: unknown[] = []) =>
      (await client.query(numbered(sql), params)).rows as T[],
    run: async (sql, params = []) => {
      await client.query(numbered(sql), params);
    },
    close: () => client.end(),
  };
}

interface FactRow {
  readonly sequence: number;
  readonly fact: string;
  readonly hash: string;
}
interface RecordRow {
  readonly ref: string;
  readonly kind: string;
  readonly body: string;
}
type Body = Record<string, unknown>;

/** What a tampering looks at: the loop's facts and records, parsed. */
class Loop {
  constructor(
    readonly db: Db,
    readonly facts: Fact[],
    readonly records: RecordRow[],
  ) {}

  static async read(db: Db): Promise<Loop> {
    const facts = (
      await db.all<FactRow>("SELECT sequence, fact, hash FROM warrant_facts ORDER BY sequence")
    ).map((r) => JSON.parse(r.fact) as Fact);
    const records = await db.all<RecordRow>("SELECT ref, kind, body FROM warrant_records");
    return new Loop(db, facts, records);
  }

  /** Index of the last fact of `kind`. */
  last(kind: Fact["step"]["kind"]): number {
    return this.facts.map((f) => f.step.kind).lastIndexOf(kind);
  }

  step(i: number): Record<string, string> {
    return this.facts[i]?.step as unknown as Record<string, string>;
  }

  record(kind: string, where: (b: Body) => boolean = () => true): RecordRow & { parsed: Body } {
    for (const r of this.records) {
      const parsed = JSON.parse(r.body) as Body;
      if (r.kind === kind && where(parsed)) return { ...r, parsed };
    }
    throw new Error(`no ${kind} record`);
  }

  /** The reviewer passage (its fact index) that reviewed the last concluded run. */
  reviewerOfLastRun(): number {
    const proposal = this.step(this.last("concluded"))["proposal/ref"];
    const review = this.record("review", (b) => b["proposal/ref"] === proposal).parsed;
    return this.facts.findIndex((f) =>
      JSON.stringify(f.step).includes(String(review["passage/ref"])),
    );
  }

  async setBody(ref: string, body: Body, newRef = ref): Promise<void> {
    await this.db.run("UPDATE warrant_records SET ref = ?, body = ? WHERE ref = ?", [
      newRef,
      JSON.stringify(body),
      ref,
    ]);
  }

  /** Replace fact i and rechain every fact from it on, as a careful forger would. */
  async rewriteFact(i: number, fact: Fact): Promise<void> {
    this.facts[i] = fact;
    let prev = i === 0 ? GENESIS_HASH : "";
    if (i > 0) {
      const rows = await this.db.all<FactRow>(
        "SELECT sequence, fact, hash FROM warrant_facts WHERE sequence = ?",
        [i],
      );
      prev = rows[0]?.hash ?? "";
    }
    for (let j = i; j < this.facts.length; j++) {
      const f = this.facts[j] as Fact;
      const hash = chainHash(prev, f);
      await this.db.run("UPDATE warrant_facts SET fact = ?, hash = ? WHERE sequence = ?", [
        canonicalJson(f),
        hash,
        f.sequence,
      ]);
      prev = hash;
    }
  }
}

const ATTACKER = new Uint8Array(32).fill(9);

interface Expect {
  /** The fact the first error names. */
  readonly fact: number;
  /** Its code is one of these. */
  readonly codes: readonly string[];
  /** What `loop check` is run with besides the store and query. */
  readonly args?: readonly string[];
}

/** The loop's own pinned key (read before any tampering). */
const pinnedKey = (l: Loop) => String(l.record("hostKey").parsed["key/public"]);

/** Deletes the run of the last admission and everything after it: facts, heads, what they named. */
async function rollBack(l: Loop): Promise<void> {
  const cut = l.last("run-admitted");
  const run = l.step(cut)["proposal/ref"] ?? "";
  const passages = new Set(
    l.facts
      .slice(cut)
      .flatMap((f) => (f.step.kind === "passage-charged" ? [f.step["passage/ref"]] : [])),
  );
  await l.db.run("DELETE FROM warrant_facts WHERE sequence > ?", [cut]);
  const acts = await l.db.all<OperatorAct & { id: number; text: string | null }>(
    "SELECT id, query, kind, target, text, operator, at FROM warrant_operator_acts",
  );
  const gone = new Set<string>();
  for (const { id, text, ...a } of acts.filter((x) => x.target.startsWith(`${run} `))) {
    gone.add(operatorActRef({ ...a, ...(text === null ? {} : { text }) }));
    await l.db.run("DELETE FROM warrant_operator_acts WHERE id = ?", [id]);
  }
  for (const r of l.records) {
    const b = JSON.parse(r.body) as Body;
    const ofRun = b["proposal/ref"] === run && r.kind !== "proposal" && r.kind !== "review";
    const orphan =
      r.kind === "head" ||
      ofRun ||
      (typeof b["passage/ref"] === "string" && passages.has(b["passage/ref"])) ||
      (typeof b["act/ref"] === "string" && gone.has(b["act/ref"]));
    if (orphan) await l.db.run("DELETE FROM warrant_records WHERE ref = ?", [r.ref]);
  }
}

/** Each tampering changes a copy of the loop and says where `loop check` must report it. */
const TAMPERINGS: Record<string, (l: Loop) => Promise<Expect>> = {
  "a signature corrupted (the last execution)": async (l) => {
    const c = l.last("concluded");
    const e = l.record("execution", (b) => b["execution/ref"] === l.step(c)["execution/ref"]);
    const sig = e.parsed.signature as Body;
    const v = String(sig.value);
    await l.setBody(e.ref, {
      ...e.parsed,
      signature: { ...sig, value: `${v.slice(0, 10)}${v[10] === "A" ? "B" : "A"}${v.slice(11)}` },
    });
    return { fact: c, codes: ["records/signature-invalid"] };
  },
  "a signature removed (a review)": async (l) => {
    const r = l.reviewerOfLastRun();
    const review = l.record("review", (b) => b["passage/ref"] === l.step(r)["passage/ref"]);
    const { signature: _s, ...unsigned } = review.parsed;
    await l.setBody(review.ref, unsigned);
    return { fact: r, codes: ["records/signature-missing"] };
  },
  "signatures swapped between two proposals": async (l) => {
    const cycles = l.facts.flatMap((f, i) => (f.step.kind === "cycle-opened" ? [i] : []));
    const [a, b] = [cycles[0] as number, cycles.at(-1) as number];
    const pa = l.record("proposal", (x) => x["proposal/ref"] === l.step(a)["proposal/ref"]);
    const pb = l.record("proposal", (x) => x["proposal/ref"] === l.step(b)["proposal/ref"]);
    await l.setBody(pb.ref, { ...pb.parsed, signature: pa.parsed.signature });
    return { fact: b, codes: ["records/signature-invalid"] };
  },
  "a record re-signed by another key": async (l) => {
    const first = l.record("passageEnd", (b) => b["passage/ref"] === l.step(1)["passage/ref"]);
    const { signature: _s, ...body } = first.parsed;
    await l.setBody(first.ref, await signRecord(body, ATTACKER));
    return { fact: 1, codes: ["records/signature-key"] };
  },
  "every record re-signed by another key, the pinned key replaced": async (l) => {
    const key = pinnedKey(l);
    for (const r of l.records) {
      if (r.kind === "hostKey") {
        const pin = await hostKeyRecord(
          l.facts[0]?.["query/id"] ?? "",
          ATTACKER,
          "2026-12-01T10:00:00Z",
        );
        await l.setBody(r.ref, pin.body as Body, pin.ref);
        continue;
      }
      const { signature: _s, ...body } = JSON.parse(r.body) as Body;
      await l.setBody(r.ref, await signRecord(body, ATTACKER));
    }
    return { fact: 0, codes: ["records/key-not-trusted"], args: ["--key", key] };
  },
  "a forged execution with its ref, fact and chain recomputed": async (l) => {
    const c = l.last("concluded");
    const e = l.record("execution", (b) => b["execution/ref"] === l.step(c)["execution/ref"]);
    const forged: Body = { ...e.parsed, "ended-at": "2026-12-01T10:00:00Z" };
    const prefix = RECORD_KIND_TABLE.execution.prefix;
    const ref = contentRef(prefix, forged, "execution/ref");
    forged["execution/ref"] = ref;
    await l.setBody(e.ref, forged, ref);
    const fact = l.facts[c] as Fact;
    await l.rewriteFact(c, {
      ...fact,
      step: { ...fact.step, "execution/ref": ref } as Fact["step"],
    });
    return {
      fact: c,
      codes: ["records/signature-invalid", "store/head-mismatch", "records/missing"],
    };
  },
  "a review flipped from accept to reject": async (l) => {
    const r = l.reviewerOfLastRun();
    const review = l.record("review", (b) => b["passage/ref"] === l.step(r)["passage/ref"]);
    const verdict = review.parsed.verdict as Body;
    await l.setBody(review.ref, { ...review.parsed, verdict: { ...verdict, decision: "reject" } });
    return { fact: r, codes: ["store/record-mismatch", "records/signature-invalid"] };
  },
  "a review deleted": async (l) => {
    const r = l.reviewerOfLastRun();
    const review = l.record("review", (b) => b["passage/ref"] === l.step(r)["passage/ref"]);
    await l.db.run("DELETE FROM warrant_records WHERE ref = ?", [review.ref]);
    return { fact: r, codes: ["records/missing"] };
  },
  "a run report deleted": async (l) => {
    const c = l.last("concluded");
    const report = l.record("runReport", (b) => b["execution/ref"] === l.step(c)["execution/ref"]);
    await l.db.run("DELETE FROM warrant_records WHERE ref = ?", [report.ref]);
    return { fact: c, codes: ["records/missing"] };
  },
  "a transcript edited": async (l) => {
    const t = l.record("transcript", (b) => b["passage/ref"] === l.step(1)["passage/ref"]);
    await l.setBody(t.ref, { ...t.parsed, provider: "someone-else" });
    return { fact: 1, codes: ["store/record-mismatch"] };
  },
  "an approval deleted": async (l) => {
    const acts = await l.db.all<{ id: number }>(
      "SELECT id FROM warrant_operator_acts WHERE kind = 'approve' ORDER BY id",
    );
    expect(acts.length).toBeGreaterThan(0);
    await l.db.run("DELETE FROM warrant_operator_acts WHERE id = ?", [acts.at(-1)?.id]);
    // The head signed after it counted it: reported there (the execution naming it, later).
    const heads = l.records
      .filter((r) => r.kind === "head")
      .map((r) => JSON.parse(r.body) as { sequence: number; acts?: number })
      .sort((a, b) => a.sequence - b.sequence);
    const most = Math.max(...heads.map((h) => h.acts ?? 0));
    const first = heads.find((h) => (h.acts ?? 0) === most);
    return { fact: (first?.sequence ?? 0) - 1, codes: ["store/truncated"] };
  },
  "a deny by mallory inserted as an act row": async (l) => {
    const first = l.facts.findIndex((f) => f.step.kind === "concluded");
    await l.db.run(
      "INSERT INTO warrant_operator_acts (query, kind, target, text, operator, at) VALUES (?, 'deny', ?, 'no', 'node-operator-binding:mallory', ?)",
      [
        l.facts[0]?.["query/id"],
        `${l.step(first)["proposal/ref"]} fix-slugify`,
        "2026-12-01T10:00:00Z",
      ],
    );
    return { fact: first, codes: ["audit/unsigned-tail", "records/act-unsigned"] };
  },
  "a changeset deleted": async (l) => {
    const c = l.last("concluded");
    const cs = l.record("changeset", (b) => b["execution/ref"] === l.step(c)["execution/ref"]);
    await l.db.run("DELETE FROM warrant_records WHERE ref = ?", [cs.ref]);
    return { fact: c, codes: ["records/missing"] };
  },
  "the rollback: the last facts, every head and the records they orphan deleted": async (l) => {
    await rollBack(l);
    const first = l.facts.findIndex((f) => f.step.kind === "concluded");
    return { fact: first, codes: ["audit/unsigned-tail"] };
  },
  "the same rollback, checked with --key": async (l) => {
    const key = pinnedKey(l);
    await rollBack(l);
    const first = l.facts.findIndex((f) => f.step.kind === "concluded");
    return { fact: first, codes: ["audit/unsigned-tail"], args: ["--key", key] };
  },
  "the last fact removed": async (l) => {
    await l.db.run("DELETE FROM warrant_facts WHERE sequence = ?", [l.facts.length]);
    return { fact: l.facts.length - 1, codes: ["store/truncated"] };
  },
  "a fact edited and the chain recomputed": async (l) => {
    // A later recorded-at (still before the next fact's) keeps every fact legal: only the head
    // signed after it tells.
    const i = 6;
    const f = l.facts[i] as Fact;
    const next = Date.parse(l.facts[i + 1]?.["recorded-at"] ?? "");
    const at = new Date(Math.min(Date.parse(f["recorded-at"]) + 1, next)).toISOString();
    await l.rewriteFact(i, { ...f, "recorded-at": at });
    const heads = l.records
      .filter((r) => r.kind === "head")
      .map((r) => (JSON.parse(r.body) as { sequence: number }).sequence)
      .filter((n) => n > i);
    return { fact: Math.min(...heads) - 1, codes: ["store/head-mismatch"] };
  },
  "a fact's kind column changed": async (l) => {
    await l.db.run("UPDATE warrant_facts SET kind = 'renewed' WHERE sequence = 3");
    return { fact: 2, codes: ["store/kind-mismatch"] };
  },
  "a fact row that is not JSON": async (l) => {
    await l.db.run("UPDATE warrant_facts SET fact = '{\"step\": ' WHERE sequence = 4");
    return { fact: 3, codes: ["store/row-invalid"] };
  },
  "a record's kind column changed": async (l) => {
    const r = l.reviewerOfLastRun();
    const review = l.record("review", (b) => b["passage/ref"] === l.step(r)["passage/ref"]);
    await l.db.run("UPDATE warrant_records SET kind = 'proposal' WHERE ref = ?", [review.ref]);
    return { fact: r, codes: ["store/kind-mismatch"] };
  },
  "a transcript row that is not JSON": async (l) => {
    const t = l.record("transcript", (b) => b["passage/ref"] === l.step(1)["passage/ref"]);
    await l.db.run("UPDATE warrant_records SET body = 'not json' WHERE ref = ?", [t.ref]);
    return { fact: 1, codes: ["store/row-invalid"] };
  },
};

interface Subject {
  readonly name: string;
  readonly enabled: boolean;
  /** A fresh copy of the demo's loop: its store URI and SQL access to its rows. */
  copy(): Promise<{ uri: string; db: Db }>;
}

let query = "";
const cwd = path.join(root, "host");
let n = 0;

async function demo(uri: string): Promise<string> {
  const r = await runCli(["demo", "--json", "--store", uri], { cwd, timeoutMs: 120_000 });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { query: string }).query;
}

const baseSqlite = path.join(cwd, "base", "ledger.db");
let basePg = "";

const subjects: Subject[] = [
  {
    name: "SQLite",
    enabled: true,
    async copy() {
      const dir = path.join(root, `copy-${++n}`);
      mkdirSync(dir);
      for (const f of ["ledger.db", "ledger.db-wal", "host.key"]) {
        const from = path.join(path.dirname(baseSqlite), f);
        if (existsSync(from)) copyFileSync(from, path.join(dir, f));
      }
      const file = path.join(dir, "ledger.db");
      return { uri: `sqlite:${file}`, db: sqliteDb(file) };
    },
  },
  {
    name: "PostgreSQL",
    enabled: pgTest.enabled,
    async copy() {
      const uri = schemas.uri();
      await (await openStore(uri)).close();
      const from = TestSchemas.schemaOf(basePg);
      const to = TestSchemas.schemaOf(uri);
      await schemas.sql(
        `INSERT INTO "${to}".warrant_facts SELECT * FROM "${from}".warrant_facts;
         INSERT INTO "${to}".warrant_records OVERRIDING SYSTEM VALUE SELECT * FROM "${from}".warrant_records;
         INSERT INTO "${to}".warrant_operator_acts OVERRIDING SYSTEM VALUE SELECT * FROM "${from}".warrant_operator_acts;
         SELECT setval(pg_get_serial_sequence('"${to}".warrant_operator_acts', 'id'), (SELECT max(id) FROM "${to}".warrant_operator_acts));`,
      );
      return { uri, db: await postgresDb(to) };
    },
  },
];

beforeAll(async () => {
  mkdirSync(path.dirname(baseSqlite), { recursive: true });
  query = await demo(`sqlite:${baseSqlite}`);
  if (pgTest.enabled) {
    basePg = schemas.uri();
    pgLoop = await demo(basePg);
  }
}, 240_000);
let pgLoop = "";

async function check(uri: string, q: string, extra: string[] = []) {
  const r = await runCli(["loop", "check", "--store", uri, q, "--json", ...extra], { cwd });
  return {
    code: r.code,
    out: JSON.parse(r.stdout) as { valid: boolean; errors: { code: string; path: string }[] },
  };
}

for (const s of subjects) {
  describe.skipIf(!s.enabled)(`loop check --store on ${s.name}: every tampering is found`, () => {
    const q = () => (s.name === "SQLite" ? query : pgLoop);

    it("the loop as the demo left it is valid, signed through its last fact", async () => {
      const { uri, db } = await s.copy();
      await db.close();
      const r = await runCli(["loop", "check", "--store", uri, q(), "--json"], { cwd });
      expect(r.code, r.stdout).toBe(0);
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      // No key is pinned on this host: the key is taken as found and said to be.
      expect(out).toMatchObject({ valid: true, state: "stopped", "key/pinned": false });
      expect(out["signed-through"]).toBe(out.facts);
      expect(out["acts/covered"]).toBe(1);
    });

    for (const [name, tamper] of Object.entries(TAMPERINGS)) {
      it(`${name}: exit 1 at the first fact it touches`, async () => {
        const { uri, db } = await s.copy();
        let want: Expect;
        try {
          want = await tamper(await Loop.read(db));
        } finally {
          await db.close();
        }
        const r = await check(uri, q(), [...(want.args ?? [])]);
        expect(r.code, JSON.stringify(r.out)).toBe(1);
        expect(r.out.valid).toBe(false);
        expect(r.out.errors[0]?.path, JSON.stringify(r.out.errors.slice(0, 3))).toBe(
          `/facts/${want.fact}`,
        );
        expect(want.codes).toContain(r.out.errors[0]?.code);
      });
    }
  });
}

describe("the pinned key", () => {
  it("--key requires another key: records/key-not-trusted at the opening", async () => {
    const { uri, db } = await subjects[0]!.copy();
    await db.close();
    const other = base64url(await publicKeyOf(ATTACKER));
    const r = await check(uri, query, ["--key", other]);
    expect(r.code).toBe(1);
    expect(r.out.errors[0]).toMatchObject({ code: "records/key-not-trusted", path: "/facts/0" });
  });

  it("the key replaced beside the store and everything re-signed: caught when pinned, said not pinned otherwise", async () => {
    const { uri, db } = await subjects[0]!.copy();
    const folder = path.dirname(uri.slice("sqlite:".length));
    let real = "";
    try {
      const l = await Loop.read(db);
      real = pinnedKey(l);
      await TAMPERINGS["every record re-signed by another key, the pinned key replaced"]?.(l);
      const attacker = base64url(await publicKeyOf(ATTACKER));
      await db.run("UPDATE warrant_meta SET value = ? WHERE key = 'host_key'", [attacker]);
    } finally {
      await db.close();
    }
    writeFileSync(path.join(folder, "host.key"), ATTACKER, { mode: 0o600 });
    // Unpinned, the forgery is consistent: valid, and said to be signed by a key nothing pins.
    const loose = await runCli(["loop", "check", "--store", uri, query, "--json"], { cwd });
    expect(loose.code, loose.stdout).toBe(0);
    expect(JSON.parse(loose.stdout)).toMatchObject({
      valid: true,
      "host/key": base64url(await publicKeyOf(ATTACKER)),
      "key/pinned": false,
    });
    const text = await runCli(["loop", "check", "--store", uri, query], { cwd });
    expect(text.stdout).toMatch(/signed by host key \S+, not pinned/);
    const required = await check(uri, query, ["--require-pinned"]);
    expect(required.code).toBe(1);
    expect(required.out.errors[0]).toMatchObject({
      code: "audit/key-not-pinned",
      path: "/facts/0",
    });
    // Pinned by --key, or by a trusted-keys file outside the store: caught.
    const byKey = await check(uri, query, ["--key", real]);
    expect(byKey.out.errors[0]).toMatchObject({
      code: "records/key-not-trusted",
      path: "/facts/0",
    });
    const trusted = path.join(root, "trusted-keys");
    writeFileSync(trusted, `# this host\n${real} host-a\n`);
    const byFile = await check(uri, query, ["--trusted-keys", trusted]);
    expect(byFile.code).toBe(1);
    expect(byFile.out.errors[0]).toMatchObject({ code: "records/key-not-trusted" });
    // The untampered loop, pinned by the same file; and --require-pinned is then satisfied.
    const clean = await subjects[0]!.copy();
    await clean.db.close();
    const pinned = await runCli(
      [
        "loop",
        "check",
        "--store",
        clean.uri,
        query,
        "--json",
        "--trusted-keys",
        trusted,
        "--require-pinned",
      ],
      { cwd },
    );
    expect(pinned.code, pinned.stdout).toBe(0);
    expect(JSON.parse(pinned.stdout)).toMatchObject({
      "key/pinned": true,
      "key/pinned-by": trusted,
    });
    // The host never takes up the key laid beside the store: an act there is refused.
    const act = await runCli(["cancel", query, "--store", uri], { cwd });
    expect(act.code, act.stdout + act.stderr).not.toBe(0);
    expect(act.stdout + act.stderr).toContain("runtime/host-key-missing");
  });

  it("every ref in the demo's ledger names its kind", async () => {
    const { db } = await subjects[0]!.copy();
    const rows = await db.all<RecordRow>("SELECT ref, kind, body FROM warrant_records");
    await db.close();
    for (const r of rows) expect(kindOfRef(r.ref)).toBe(r.kind);
  });
});

describe("export --bundle and loop check BUNDLE", () => {
  it("a bundle checks valid offline, requires the host key with --key, and a tampered one exits 1 at its fact", async () => {
    const { uri, db } = await subjects[0]!.copy();
    await db.close();
    const exported = await runCli(["export", query, "--bundle", "--store", uri], { cwd });
    expect(exported.code, exported.stderr).toBe(0);
    const bundle = JSON.parse(exported.stdout) as {
      format: string;
      "host/key": string;
      head: string;
      loop: unknown;
      records: { ref: string; kind: string; body: string }[];
    };
    expect(bundle.format).toBe("warrant-loop-bundle.v1");
    // Exported under a head signed for the export: this host holds the store's key.
    const head = bundle.records.find((r) => r.ref === bundle.head);
    expect(JSON.parse(head?.body ?? "{}")).toMatchObject({ reason: "export" });
    const file = path.join(root, "loop.bundle.json");
    writeFileSync(file, exported.stdout);
    const hostKey = keyFileOf(keyDir(), bundle["host/key"]);
    const ok = await runCli(["loop", "check", file, "--key", hostKey, "--json"], { cwd });
    expect(ok.code, ok.stdout).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      valid: true,
      "key/pinned": true,
      "key/pinned-by": "--key",
      "host/key": bundle["host/key"],
    });
    // The loop document inside stays seed-valid on its own.
    const doc = path.join(root, "loop.doc.json");
    writeFileSync(doc, JSON.stringify(bundle.loop));
    expect((await runCli(["loop", "check", doc], { cwd })).code).toBe(0);
    // A review flipped inside the bundle.
    const review = bundle.records.find((r) => r.kind === "review");
    if (review === undefined) throw new Error("no review in the bundle");
    const b = JSON.parse(review.body) as { verdict: Record<string, unknown> };
    review.body = JSON.stringify({ ...b, verdict: { ...b.verdict, decision: "reject" } });
    const tampered = path.join(root, "tampered.bundle.json");
    writeFileSync(tampered, JSON.stringify(bundle));
    const bad = await runCli(["loop", "check", tampered, "--json"], { cwd });
    expect(bad.code).toBe(1);
    const errors = (JSON.parse(bad.stdout) as { errors: { code: string; path: string }[] }).errors;
    expect(errors[0]?.path).toMatch(/^\/facts\/\d+$/);
    expect(["store/record-mismatch", "records/signature-invalid"]).toContain(errors[0]?.code);
  });

  it("a bundle rolled back in transit (last facts, every head, their orphans, the document redone): audit/unsigned-tail, with and without --key", async () => {
    const { uri, db } = await subjects[0]!.copy();
    try {
      await rollBack(await Loop.read(db));
    } finally {
      await db.close();
    }
    // The rolled-back rows exported as a bundle are what an attacker in transit would send.
    const exported = await runCli(["export", query, "--bundle", "--store", uri], {
      cwd,
      env: { WARRANT_KEY_DIR: path.join(root, "no-keys") },
    });
    expect(exported.code, exported.stderr).toBe(0);
    const bundle = JSON.parse(exported.stdout) as { head: string | null; "host/key": string };
    expect(bundle.head).toBeNull();
    const file = path.join(root, "rolled-back.bundle.json");
    writeFileSync(file, exported.stdout);
    for (const extra of [[], ["--key", keyFileOf(keyDir(), bundle["host/key"])]]) {
      const r = await runCli(["loop", "check", file, "--json", ...extra], { cwd });
      expect(r.code, r.stdout).toBe(1);
      const first = (JSON.parse(r.stdout) as { errors: { code: string; path: string }[] })
        .errors[0];
      expect(first).toMatchObject({ code: "audit/unsigned-tail", path: "/facts/5" });
    }
  });
});
