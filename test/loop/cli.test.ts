// `warrant loop simulate` and `warrant loop check` as a user runs them (the built CLI).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { widestScript } from "../../bench/suites/loop.js";
import { trustedKeysFile } from "../../src/adapters/fs/host-key.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { parseScript } from "../../src/core/loop/script.js";
import { simulate } from "../../src/core/loop/simulate.js";
import type { Fact, LoopDocument } from "../../src/core/loop/types.js";
import { base64url } from "../../src/core/records/canonical.js";
import { toLedgerRecord } from "../../src/core/records/ledger-record.js";
import { buildProposal } from "../../src/core/records/proposal.js";
import { publicKeyOf } from "../../src/core/records/signature.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { makeRecord } from "../../src/runtime/records.js";
import { signingStore } from "../../src/runtime/signing-store.js";
import { repoRoot, runCli, seedExamplesDir } from "../helpers/cli.js";
import { at, BINDING, open, QUERY } from "./gwt.js";

const PUBLISHED = path.join(seedExamplesDir, "open.corpus-task-pack-loop.json");
const DEMO = path.join(repoRoot, "examples/loop-scripts/demo.json");
let dir = "";

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "warrant-loop-cli-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, value: unknown) => {
  const file = path.join(dir, name);
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value));
  return file;
};

/** The demo script's final document, simulated in-process (the CLI form is tested on its own). */
function demoDocument(): LoopDocument {
  const script = parseScript(JSON.parse(readFileSync(DEMO, "utf8")));
  if (!script.ok) throw new Error("demo script invalid");
  return simulate(script.value).loop as LoopDocument;
}

describe("warrant loop simulate", () => {
  it("prints {outcomes, loop} with --json, in the docs/spec/loop.md shape", async () => {
    const r = await runCli(["loop", "simulate", DEMO, "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { outcomes: Record<string, unknown>[]; loop: unknown };
    expect(Object.keys(out).sort()).toEqual(["loop", "outcomes"]);
    for (const o of out.outcomes) {
      for (const k of Object.keys(o))
        expect(["op", "result", "sequence", "code", "counter"]).toContain(k);
    }
    expect(out.outcomes[7]).toEqual({
      op: "admit-run",
      result: "refused",
      code: "loop/cycle-missing",
    });
    expect(out.outcomes[9]).toEqual({ op: "cancel", result: "refused", code: "loop/not-operator" });
    expect(contractValidators().loop(out.loop)).toBe(true);
  });
  it("prints one line per command and the loop without --json", async () => {
    const r = await runCli(["loop", "simulate", DEMO]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(16);
    expect(lines[7]).toMatch(/admit-run\s+refused loop\/cycle-missing/);
    expect(lines[15]).toMatch(/^loop query:demo-1: stopped \(succeeded\)/);
  });
  it("prints loop: null when the loop was never opened", async () => {
    const file = write("never.json", {
      query: "query:n",
      binding: "operator-task-local-binding:n",
      operator: "node-operator-binding:n",
      layers: [{ "max/passages": 1 }],
      commands: [{ at: "2026-12-01T10:00:00Z", op: "open" }],
    });
    const r = await runCli(["loop", "simulate", file, "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      outcomes: [{ op: "open", result: "refused", code: "local-binding/incomplete" }],
      loop: null,
    });
  });
  it("writes the widest loop (1 366 facts) whole through a pipe", async () => {
    const file = write("widest.json", widestScript());
    const r = await runCli(["loop", "simulate", file, "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { outcomes: unknown[]; loop: LoopDocument };
    expect(out.outcomes).toHaveLength(1366);
    expect(out.loop.facts).toHaveLength(1366);
    const doc = write("widest-doc.json", out.loop);
    const c = await runCli(["loop", "check", doc, "--json"]);
    expect(c.code).toBe(0);
  });
  it("refuses an invalid script with exit 1 and its problems", async () => {
    const file = write("bad.json", { query: "query:x", commands: [] });
    const r = await runCli(["loop", "simulate", file, "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { valid: boolean; errors: Array<{ code: string }> };
    expect(out.valid).toBe(false);
    expect(out.errors[0]?.code).toBe("loop/script-invalid");
    const notJson = await runCli(["loop", "simulate", write("nope.json", "{")]);
    expect(notJson.code).toBe(1);
    expect(notJson.stdout).toMatch(/loop\/json/);
  });
  it("a missing file is a usage error (exit 2)", async () => {
    const r = await runCli(["loop", "simulate", path.join(dir, "absent.json")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot read script/);
  });
});

describe("warrant loop check LOOP.json", () => {
  it("accepts the published open loop, and with --now before its deadline", async () => {
    const r = await runCli(["loop", "check", PUBLISHED]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/valid/);
    const j = await runCli(["loop", "check", PUBLISHED, "--now", "2026-09-25T11:30:00Z", "--json"]);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({
      valid: true,
      state: "open",
      facts: 1,
      errors: [],
    });
  });
  it("after the published loop's deadline its `open` is refused (exit 1)", async () => {
    const r = await runCli(["loop", "check", PUBLISHED, "--now", "2026-09-25T12:00:01Z", "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errors[0]).toMatchObject({
      code: "loop/projection-mismatch",
      path: "/state",
    });
  });
  it("an invalid --now is a usage error", async () => {
    expect((await runCli(["loop", "check", PUBLISHED, "--now", "soon"])).code).toBe(2);
  });

  const tampers: Array<[string, (d: LoopDocument) => unknown, string, string]> = [
    [
      "an edited counter",
      (d) => ({ ...d, spent: { ...d.spent, cycles: 1 } }),
      "loop/projection-mismatch",
      "/spent/cycles",
    ],
    [
      "a missing fact",
      (d) => ({ ...d, facts: d.facts.filter((f) => f.sequence !== 4) }),
      "loop/sequence-gap",
      "/facts/3/sequence",
    ],
    [
      "a second opening",
      (d) => ({
        ...d,
        facts: [...d.facts, { ...(d.facts[0] as Fact), sequence: d.facts.length + 1 }],
      }),
      "loop/duplicate-fact",
      "/facts/11",
    ],
    [
      "a stop that disagrees",
      (d) => ({
        ...d,
        stop: {
          reason: "unknown",
          "execution/ref": (d.stop as { "execution/ref": string })["execution/ref"],
        },
      }),
      "loop/stop-mismatch",
      "/stop",
    ],
    [
      "a fact whose precondition did not hold",
      (d) => ({
        ...d,
        facts: d.facts.map((f) =>
          f.sequence === 3
            ? {
                ...f,
                step: {
                  kind: "run-admitted",
                  "proposal/ref": (f.step as { "proposal/ref": string })["proposal/ref"],
                },
              }
            : f,
        ),
      }),
      "loop/cycle-missing",
      "/facts/2",
    ],
  ];
  it.each(tampers)("refuses %s with its code and path", async (_what, tamper, code, at) => {
    const file = write(`tamper-${code.replace("/", "-")}.json`, tamper(demoDocument()));
    const r = await runCli(["loop", "check", file, "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as {
      valid: boolean;
      errors: Array<{ code: string; path: string }>;
    };
    expect(out.valid).toBe(false);
    expect(out.errors[0]).toMatchObject({ code, path: at });
  });
  it("names the file, path and code on one line without --json", async () => {
    const file = write("tamper-human.json", {
      ...demoDocument(),
      spent: { ...demoDocument().spent, runs: 0 },
    });
    const human = await runCli(["loop", "check", file]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(`${file} /spent/runs: loop/projection-mismatch`);
  });
  it("refuses a document that is not JSON or breaks the schema", async () => {
    expect((await runCli(["loop", "check", write("x.json", "[")])).code).toBe(1);
    const r = await runCli(["loop", "check", write("y.json", { schema: "x" }), "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errors[0].code).toBe("loop/schema");
  });
});

describe("warrant loop check --store URI QUERY", () => {
  /** A signed loop: opened with its binding, a planning passage, the cycle of its proposal. */
  async function seed(file: string, withRecord: boolean) {
    const key = new Uint8Array(32).fill(3);
    const store = signingStore(await openStore(`sqlite:${file}`), key, { now: () => at(0) });
    try {
      const ledger = new LoopLedger(store);
      const candidate = { hypothesis: "h", steps: [] };
      const p = buildProposal({
        query: QUERY,
        agentId: "agent:a1",
        passageRef: "passage:p1",
        candidate,
        evidence: [],
        createdAt: "2026-12-01T10:00:01Z",
      });
      const binding = makeRecord("binding", QUERY, { "query/id": QUERY, "binding/ref": BINDING });
      await ledger.execute(QUERY, open(), at(0), [binding]);
      await ledger.execute(
        QUERY,
        { op: "charge-passage", role: "implementer", agent: "agent:a1", passage: "passage:p1" },
        at(1),
      );
      await store.putRecords([
        makeRecord("passageEnd", QUERY, {
          "query/id": QUERY,
          "passage/ref": "passage:p1",
          role: "implementer",
          "agent/id": "agent:a1",
          message: { type: "Plan", payload: candidate, paper_ref: null },
        }),
      ]);
      await ledger.execute(
        QUERY,
        { op: "open-cycle", proposal: p["proposal/ref"] },
        at(2),
        withRecord ? [toLedgerRecord("proposal", p)] : [],
      );
    } finally {
      await store.close();
    }
  }
  it("accepts a loop stored in SQLite with its records", async () => {
    const file = path.join(dir, "good.db");
    await seed(file, true);
    const r = await runCli([
      "loop",
      "check",
      "--store",
      `sqlite:${file}`,
      QUERY,
      "--json",
      "--now",
      "2026-12-01T10:00:05Z",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      query: QUERY,
      valid: true,
      state: "open",
      facts: 3,
    });
  });
  it("refuses a stored cycle without its proposal record", async () => {
    const file = path.join(dir, "norecord.db");
    await seed(file, false);
    const r = await runCli(["loop", "check", "--store", `sqlite:${file}`, QUERY, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errors[0]).toMatchObject({
      code: "records/missing",
      path: "/facts/2",
    });
  });
  it("says whether the key is pinned: --key, --trusted-keys, the default trusted-keys file; --require-pinned", async () => {
    const file = path.join(dir, "pinned", "ledger.db");
    mkdirSync(path.dirname(file), { recursive: true });
    await seed(file, true);
    const pub = base64url(await publicKeyOf(new Uint8Array(32).fill(3)));
    const args = [
      "loop",
      "check",
      "--store",
      `sqlite:${file}`,
      QUERY,
      "--now",
      "2026-12-01T10:00:05Z",
    ];
    const json = async (...extra: string[]) => {
      const r = await runCli([...args, "--json", ...extra]);
      return { code: r.code, out: JSON.parse(r.stdout || "{}") as Record<string, unknown>, r };
    };
    const loose = await json();
    expect(loose.out).toMatchObject({ valid: true, "host/key": pub, "key/pinned": false });
    expect((await runCli(args)).stdout).toContain(`signed by host key ${pub}, not pinned`);
    const required = await json("--require-pinned");
    expect(required.code).toBe(1);
    expect(required.out.errors).toEqual([
      expect.objectContaining({ code: "audit/key-not-pinned", path: "/facts/0" }),
    ]);
    expect((await json("--key", pub, "--require-pinned")).out).toMatchObject({
      "key/pinned": true,
      "key/pinned-by": "--key",
    });
    const trusted = path.join(dir, "trusted-keys");
    writeFileSync(trusted, `# keys this checker trusts\n\n${pub} the demo host\n`);
    expect((await json("--trusted-keys", trusted, "--require-pinned")).out).toMatchObject({
      "key/pinned-by": trusted,
    });
    // The default file, in this run's (temporary) config folder.
    const fallback = trustedKeysFile();
    mkdirSync(path.dirname(fallback), { recursive: true });
    writeFileSync(fallback, `${"B".repeat(43)} another host\n`);
    try {
      const foreign = await json();
      expect(foreign.code).toBe(1);
      expect(foreign.out.errors).toEqual([
        expect.objectContaining({ code: "records/key-not-trusted", path: "/facts/0" }),
      ]);
      writeFileSync(fallback, `${pub}\n`);
      expect((await json()).out).toMatchObject({ "key/pinned-by": fallback });
    } finally {
      rmSync(fallback);
    }
    // A trusted-keys file that is not one, or an anchor inside the store's folder: usage errors.
    writeFileSync(trusted, `${pub}\nnot-a-key\n`);
    const bad = await runCli([...args, "--trusted-keys", trusted]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${trusted}:2: not a public key`);
    const beside = path.join(path.dirname(file), "host.key");
    writeFileSync(beside, new Uint8Array(32).fill(3));
    const inside = await runCli([...args, "--key", beside]);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain("lies in the store's folder");
  });
  it("refuses a query the store does not hold", async () => {
    const file = path.join(dir, "good.db");
    const r = await runCli(["loop", "check", "--store", `sqlite:${file}`, "query:absent"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/loop\/not-opened/);
  });
});

it("the example script in the repository is valid JSON", () => {
  expect(() => JSON.parse(readFileSync(DEMO, "utf8"))).not.toThrow();
});
