// `warrant record REF` and `warrant show QUERY --records` through the built CLI, over the ledger of
// one demo run: every record can be read (a plan with its diff, a review's findings, a run's
// excerpts and each check's detail, a transcript turn by turn, the Result, an operator act), an
// unknown ref is `record/not-found` (1), a malformed one a usage error (2); and a reader that closes
// the pipe early (`| head`) gets no EPIPE stack trace.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliPath, runCli } from "../helpers/cli.js";

let cwd: string;
let query: string;
let records: { ref: string; kind: string }[];
const store = ["--store", "sqlite:.warrant/ledger.db"];

beforeAll(async () => {
  cwd = mkdtempSync(path.join(tmpdir(), "warrant-record-"));
  const r = await runCli(["demo"], { cwd });
  expect(r.code, r.stderr).toBe(0);
  query = (r.stdout.trim().split("\n").at(-1) ?? "").replace(/^query: /, "");
  const shown = await runCli(["show", query, "--json", ...store], { cwd });
  records = (JSON.parse(shown.stdout) as { records: { ref: string; kind: string }[] }).records;
});

afterAll(() => {
  rmSync(cwd, { recursive: true, force: true });
});

const refsOf = (kind: string) => records.filter((r) => r.kind === kind).map((r) => r.ref);
const record = (...args: string[]) => runCli(["record", ...args, ...store], { cwd });

interface ExecutionJson {
  ref: string;
  kind: string;
  query: string;
  body: {
    outcome: string;
    checks: { "check/id": string; passed: boolean }[];
    approvals: { "act/ref": string }[];
  };
  report: { ref: string; body: { checks: { name: string; passed: boolean; detail: string }[] } };
  acts: { kind: string; target: string; text?: string }[];
}

describe("warrant record", () => {
  it("--json prints the execution record with its run report: each check's detail", async () => {
    for (const ref of refsOf("execution")) {
      const r = await record(ref, "--json");
      expect(r.code, r.stderr).toBe(0);
      const j = JSON.parse(r.stdout) as ExecutionJson;
      expect(j).toMatchObject({ ref, kind: "execution", query });
      expect(j.body.checks.length).toBeGreaterThan(0);
      const details = new Map(j.report.body.checks.map((c) => [c.name, c]));
      for (const c of j.body.checks) {
        const d = details.get(c["check/id"]);
        expect(d?.passed).toBe(c.passed);
        expect(typeof d?.detail).toBe("string");
        expect(d?.detail.length).toBeGreaterThan(0);
      }
    }
    // The first run failed verification: its failed check says why.
    const first = JSON.parse(
      (await record(refsOf("execution")[0] ?? "", "--json")).stdout,
    ) as ExecutionJson;
    expect(first.body.outcome).toBe("verification-failed");
    expect(first.report.body.checks.find((c) => c.name === "tests-pass")?.detail).toMatch(
      /run-tests exited 1/,
    );
  });

  it("renders an execution with each step's excerpt, each check's detail and the act that approved its mutation", async () => {
    const [failed, verified] = refsOf("execution");
    const f = await record(failed ?? "");
    expect(f.code).toBe(0);
    expect(f.stdout.split("\n")[0]).toBe(`execution ${failed}`);
    expect(f.stdout).toContain("outcome: verification-failed");
    expect(f.stdout).toMatch(/- tests-pass: failed \(exit 1\)\n\s+detail:\s+run-tests exited 1: /);
    expect(f.stdout).toContain("excerpt:");
    expect(f.stdout).toContain("not ok 2 - collapses repeated separators");
    const v = await record(verified ?? "");
    expect(v.stdout).toContain("outcome: verified");
    expect(v.stdout).toMatch(/- fix-slugify \(mutation, patch\): ok \(approved\)/);
    expect(v.stdout).toMatch(
      /approve fix-slugify of corpus-experiment:sha256:\S+ by \S+ at \S+: approved automatically/,
    );
  });

  it("renders a plan with its diff, a review's findings, a transcript turn by turn and the Result", async () => {
    const proposals = await Promise.all(refsOf("proposal").map((ref) => record(ref)));
    const withDiff = proposals.find((p) => p.stdout.includes("diff:"));
    expect(withDiff?.stdout).toContain("hypothesis: Each separator is replaced on its own");
    expect(withDiff?.stdout).toContain('+    .normalize("NFKD")');
    expect(withDiff?.stdout).toMatch(/- fix-slugify: patch src\/slugify.js/);

    const reviews = await Promise.all(refsOf("review").map((ref) => record(ref)));
    const rejection = reviews.find((r) => r.stdout.includes("decision: reject"));
    expect(rejection?.stdout).toMatch(/- \[high\] The patch returns hard-coded slugs/);
    expect(rejection?.stdout).toContain("evidence: rewrite-slugify");

    const transcript = await record(refsOf("transcript")[0] ?? "");
    expect(transcript.stdout).toContain("role: implementer");
    expect(transcript.stdout).toMatch(/call 0\n\s+summary: Read slugify before planning\./);
    expect(transcript.stdout).toMatch(
      /tool workspace\.read_file \{"path":"src\/slugify\.js"\} → ok/,
    );
    expect(transcript.stdout).toMatch(/call 1\n\s+summary: .*\n\s+message: Plan/);

    const ends = await Promise.all(refsOf("passageEnd").map((ref) => record(ref)));
    const summary = ends.find((e) => e.stdout.includes("role: summarizer"));
    expect(summary?.stdout).toContain("Result:");
    expect(summary?.stdout).toContain("outcome: verified");
    expect(summary?.stdout).toContain("slugify replaced each non-alphanumeric character");
  });

  it("prints an operator act by its ref", async () => {
    const verified = JSON.parse(
      (await record(refsOf("execution")[1] ?? "", "--json")).stdout,
    ) as ExecutionJson;
    const actRef = verified.body.approvals[0]?.["act/ref"] ?? "";
    expect(actRef).toMatch(/^warrant-operator-act:sha256:/);
    const r = await record(actRef);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`operatorAct ${actRef}`);
    expect(r.stdout).toMatch(/approve fix-slugify of corpus-experiment:sha256:\S+ by /);
    const j = JSON.parse((await record(actRef, "--json")).stdout) as {
      kind: string;
      body: unknown;
    };
    expect(j).toMatchObject({ kind: "operatorAct", body: { kind: "approve" } });
  });

  it("an unknown ref is record/not-found (exit 1); a malformed one is a usage error (exit 2); nothing on stdout", async () => {
    const unknown = await record(`corpus-task-pack-execution:sha256:${"A".repeat(43)}`);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("record/not-found");
    expect(unknown.stdout).toBe("");
    const unknownAct = await record(`warrant-operator-act:sha256:${"A".repeat(43)}`, "--json");
    expect(unknownAct.code).toBe(1);
    expect(unknownAct.stdout).toBe("");
    for (const bad of [
      "nonsense",
      "corpus-experiment:sha256:short",
      `Corpus:sha256:${"A".repeat(43)}`,
    ]) {
      const r = await record(bad);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain("record/ref-invalid");
      expect(r.stdout).toBe("");
    }
  });
});

describe("warrant show --records", () => {
  it("renders every record in the order stored, then the operator acts", async () => {
    const r = await runCli(["show", query, "--records", ...store], { cwd });
    expect(r.code, r.stderr).toBe(0);
    let at = 0;
    for (const rec of records) {
      const i = r.stdout.indexOf(`\n${rec.kind} ${rec.ref}\n`, at);
      expect(i, `${rec.kind} ${rec.ref}`).toBeGreaterThan(at - 1);
      at = i;
    }
    expect(r.stdout).toMatch(
      /operator acts: 1\n {2}approve fix-slugify of .*: approved automatically/,
    );
  });

  it("--json adds each record's body and the acts", async () => {
    const r = await runCli(["show", query, "--records", "--json", ...store], { cwd });
    const j = JSON.parse(r.stdout) as {
      records: { ref: string; kind: string; body: unknown }[];
      acts: { kind: string }[];
    };
    expect(j.records.map((x) => x.ref)).toEqual(records.map((x) => x.ref));
    for (const x of j.records) expect(typeof x.body).toBe("object");
    expect(j.acts.map((a) => a.kind)).toEqual(["approve"]);
  });

  it("a reader that closes the pipe early gets no EPIPE stack trace: the command ends quietly", async () => {
    const child = spawn(process.execPath, [cliPath, "show", query, "--records", ...store], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    // As `| head -0`: the reader closes its end before the command writes, so every write fails.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).not.toMatch(/EPIPE|Error|at /);
    expect(code).toBe(0);
  });
});
