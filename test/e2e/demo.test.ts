// `warrant demo` through the built CLI: the story plays out in the real sandbox and the exported
// loop document, and the records behind it, say exactly what happened.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyDir, keyFileOf } from "../../src/adapters/fs/host-key.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import type { LoopDocument, Step } from "../../src/core/loop/types.js";
import { base64url } from "../../src/core/records/canonical.js";
import { publicKeyOf, verifyRecordSignature } from "../../src/core/records/signature.js";
import { runCli } from "../helpers/cli.js";

let cwd: string;
let stdout: string;
let code: number | null;
let query: string;
const store = () => ["--store", "sqlite:.warrant/ledger.db"];

beforeAll(async () => {
  cwd = mkdtempSync(path.join(tmpdir(), "warrant-demo-"));
  const r = await runCli(["demo"], { cwd });
  stdout = r.stdout;
  code = r.code;
  query = (stdout.trim().split("\n").at(-1) ?? "").replace(/^query: /, "");
});

afterAll(() => {
  rmSync(cwd, { recursive: true, force: true });
});

describe("warrant demo", () => {
  it("finishes successfully, says it approved the mutations itself and where the ledger is, and ends with the query", () => {
    expect(code).toBe(0);
    expect(stdout).toContain("approves each mutation itself");
    expect(stdout).toContain("approved fix-slugify automatically");
    // No --yes was given: the live view says who approved, not a flag the user never typed.
    expect(stdout).toContain("approved fix-slugify automatically (the demo approves each mutation");
    expect(stdout).not.toContain("(--yes)");
    expect(stdout).toContain("ledger: sqlite:.warrant/ledger.db");
    expect(stdout).toMatch(/warrant show query:/);
    expect(stdout.trim().split("\n").at(-1)).toMatch(/^query: query:fix-failing-test-\S+$/);
  });

  it("exports a schema-valid loop: two runs, the rejected cycle, stopped succeeded", async () => {
    const r = await runCli(["export", query, ...store()], { cwd });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as LoopDocument;
    const validate = contractValidators().loop;
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc.state).toBe("stopped");
    expect(doc.stop?.reason).toBe("succeeded");
    expect(doc.spent).toEqual({
      passages: 7,
      "solver-passages": 3,
      "reviewer-passages": 3,
      cycles: 3,
      runs: 2,
    });
    const steps = doc.facts.map((f) => f.step);
    const kinds = steps.map((s) => s.kind);
    expect(kinds.filter((k) => k === "run-admitted")).toHaveLength(2);
    const concluded = steps.filter(
      (s): s is Extract<Step, { kind: "concluded" }> => s.kind === "concluded",
    );
    expect(concluded.map((c) => c.outcome)).toEqual(["verification-failed", "verified"]);
    // The second cycle was opened and reviewed but never admitted: the rejected candidate.
    const cycles = steps.filter((s) => s.kind === "cycle-opened").map((s) => s["proposal/ref"]);
    const admitted = new Set(
      steps.filter((s) => s.kind === "run-admitted").map((s) => s["proposal/ref"]),
    );
    expect(cycles).toHaveLength(3);
    expect(cycles.filter((c) => !admitted.has(c))).toEqual([cycles[1]]);
    // The summarizer's passage comes before the concluding fact.
    expect(kinds.slice(-2)).toEqual(["passage-charged", "concluded"]);
    expect((steps.at(-2) as { role: string }).role).toBe("summarizer");
  });

  it("stores the records behind the facts: proposals, reviews (one rejection), executions, transcripts", async () => {
    const r = await runCli(["show", query, "--json", ...store()], { cwd });
    expect(r.code).toBe(0);
    const { records } = JSON.parse(r.stdout) as { records: { ref: string; kind: string }[] };
    const count = (k: string) => records.filter((x) => x.kind === k).length;
    expect(count("proposal")).toBe(3);
    expect(count("review")).toBe(3);
    expect(count("execution")).toBe(2);
    expect(count("transcript")).toBe(7);
    expect(count("stepStarted")).toBe(5);
    const db = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
    try {
      const all = await db.listRecords(query);
      const verdicts = all
        .filter((x) => x.kind === "review")
        .map((x) => (x.body as { verdict: { decision: string } }).verdict.decision);
      expect(verdicts).toEqual(["accept", "reject", "accept"]);
      const outcomes = all
        .filter((x) => x.kind === "execution")
        .map((x) => (x.body as { outcome: string }).outcome);
      expect(outcomes.sort()).toEqual(["verification-failed", "verified"]);
    } finally {
      await db.close();
    }
  });

  it("passes warrant loop check --store (hash chain, records, projection)", async () => {
    const r = await runCli(["loop", "check", "--store", "sqlite:.warrant/ledger.db", query], {
      cwd,
    });
    expect(r.stdout + r.stderr).toContain("valid");
    expect(r.code).toBe(0);
  });

  it("lists the loop, and resume on the stopped loop prints its state and exits 0", async () => {
    const loops = await runCli(["loops", "--json", ...store()], { cwd });
    expect(JSON.parse(loops.stdout)).toEqual([
      { query, state: "stopped", stop: { reason: "succeeded" }, status: "stopped" },
    ]);
    const resume = await runCli(["resume", query, ...store()], { cwd });
    expect(resume.code).toBe(0);
    expect(resume.stdout).toContain("stopped: succeeded");
  });

  it("runs again in the same store as a second loop beside the first", async () => {
    const again = await runCli(["demo"], { cwd });
    expect(again.code, again.stderr).toBe(0);
    const loops = JSON.parse(
      (await runCli(["loops", "--json", ...store()], { cwd })).stdout,
    ) as unknown[];
    expect(loops).toHaveLength(2);
  });

  it("signs proposals and executions with the host key the store records, kept outside its folder, never in it", async () => {
    const db = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
    const recorded = (await db.hostKey?.()) ?? "";
    const file = keyFileOf(keyDir(), recorded);
    const key = new Uint8Array(readFileSync(file));
    expect(key).toHaveLength(32);
    expect(base64url(await publicKeyOf(key))).toBe(recorded);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(path.join(cwd, ".warrant/host.key"))).toBe(false);
    try {
      const signedKinds = (await db.listRecords(query)).filter(
        (r) => r.kind === "proposal" || r.kind === "execution",
      );
      expect(signedKinds).toHaveLength(5);
      for (const r of signedKinds) {
        expect(await verifyRecordSignature(r.body as object, await publicKeyOf(key))).toBe(true);
      }
    } finally {
      await db.close();
    }
    const ledger = readFileSync(path.join(cwd, ".warrant/ledger.db"));
    expect(ledger.includes(Buffer.from(key))).toBe(false);
    expect(ledger.includes(Buffer.from(base64url(key)))).toBe(false);
  });
});
