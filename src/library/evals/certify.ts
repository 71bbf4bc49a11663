// Certifying a set's tasks: for each task with an oracle (a unified diff), the verifier runs on the
// untouched baseline K times (it must fail every time: the task is real) and on the baseline with the
// oracle applied K times (it must pass every time). No model is called and no loop is opened; each
// task's result is stored as a record signed by the host key.
import { readFileSync } from "node:fs";
import { WarrantError } from "../../core/result.js";
import { type ParsedDiff, parseUnifiedDiff } from "../../core/taskpack/patch.js";
import type { RuntimeContext } from "../../runtime/context.js";
import { verifyPatched } from "../../runtime/run-executor.js";
import { type Certification, type CertificationStatus, putCertification } from "./book.js";
import type { LoadedEvalSet } from "./load.js";
import type { EvalRuntime } from "./run.js";
import { oracleDigestOf } from "./run.js";

export interface CertifyOptions {
  /** Runs of each side per task (default 3). */
  readonly epochs?: number;
}

export interface CertifiedTask {
  readonly task: string;
  readonly status: CertificationStatus;
  readonly baseline: { readonly passed: number; readonly runs: number };
  readonly oracle: { readonly passed: number; readonly runs: number };
  /** Why the oracle is broken when it does not even parse or apply. */
  readonly detail?: string;
}

export interface CertifyReport {
  readonly eval: string;
  readonly tasks: readonly CertifiedTask[];
}

/** The runtime a certification needs: a drive's context (its sandbox, clock and signer). */
export interface CertifyRuntime extends EvalRuntime {
  context(): Promise<
    Pick<RuntimeContext, "sandbox" | "clock" | "emit" | "signer"> & { close(): Promise<void> }
  >;
}

/** The per-file diffs of a unified diff of any number of files (`patch/malformed` otherwise). */
export function splitOracle(text: string): { path: string; diff: ParsedDiff }[] | string {
  const lines = text.split("\n");
  const starts: number[] = [];
  for (let i = 0; i + 1 < lines.length; i++)
    if (lines[i]?.startsWith("--- ") && lines[i + 1]?.startsWith("+++ ")) starts.push(i);
  if (starts.length === 0) return "the oracle is not a unified diff (no ---/+++ pair)";
  const out: { path: string; diff: ParsedDiff }[] = [];
  for (const [n, start] of starts.entries()) {
    const end = starts[n + 1] ?? lines.length;
    const chunk = lines.slice(start, end).join("\n");
    const parsed = parseUnifiedDiff(chunk.endsWith("\n") ? chunk : `${chunk}\n`);
    if (!parsed.ok) return parsed.errors.map((e) => e.message).join("; ");
    const path = parsed.value.newPath ?? parsed.value.oldPath;
    if (path === null) return "a file diff names no path";
    out.push({ path, diff: parsed.value });
  }
  return out;
}

/** A task's status from its runs: the baseline must always fail, the oracle always pass. */
export function certificationStatus(
  baseline: { passed: number; runs: number },
  oracle: { passed: number; runs: number },
): CertificationStatus {
  if (baseline.passed === baseline.runs) return "passes-without-change";
  if (oracle.passed === 0) return "broken-oracle";
  if (baseline.passed === 0 && oracle.passed === oracle.runs) return "certified";
  return "flaky";
}

export async function certifySet(
  rt: CertifyRuntime,
  set: LoadedEvalSet,
  options: CertifyOptions,
): Promise<CertifyReport> {
  const epochs = options.epochs ?? 3;
  if (!Number.isSafeInteger(epochs) || epochs < 1)
    throw new WarrantError("eval/epochs", "certify takes a positive number of epochs");
  const ctx = await rt.context();
  const tasks: CertifiedTask[] = [];
  try {
    for (const task of set.tasks) {
      if (task.oracle === undefined) continue;
      const text = readFileSync(task.oracle, "utf8");
      const patches = splitOracle(text);
      const baseline = { passed: 0, runs: 0 };
      const oracle = { passed: 0, runs: 0 };
      let detail: string | undefined;
      for (let k = 0; k < epochs; k++) {
        const ref = `certify-${task.id}-baseline-${k}`;
        const r = await verifyPatched(ctx, task.pack, [], ref);
        if (r.refusal === "environment/not-contained")
          throw new WarrantError("environment/not-contained", r.detail ?? "no sandbox");
        baseline.runs++;
        if (r.passed) baseline.passed++;
      }
      for (let k = 0; k < epochs; k++) {
        oracle.runs++;
        if (typeof patches === "string") {
          detail = patches;
          continue;
        }
        const r = await verifyPatched(ctx, task.pack, patches, `certify-${task.id}-oracle-${k}`);
        if (!r.applied) detail = r.detail;
        if (r.passed) oracle.passed++;
      }
      const status = certificationStatus(baseline, oracle);
      const body: Certification = {
        schema: "warrant-eval-certification.v1",
        task: task.id,
        packDigest: task.pack.digest,
        oracleDigest: oracleDigestOf(task.oracle),
        status,
        baseline,
        oracle,
        "certified-at": rt.clock.now().toISOString(),
      };
      const signed = ctx.signer === undefined ? body : await ctx.signer.sign(body);
      await putCertification(rt.warrant.store, signed);
      tasks.push({
        task: task.id,
        status,
        baseline,
        oracle,
        ...(detail === undefined ? {} : { detail }),
      });
    }
  } finally {
    await ctx.close();
  }
  return { eval: set.id, tasks };
}
