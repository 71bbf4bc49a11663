// Executes one admitted run in a fresh contained environment: steps in order (each step journaled
// as started before it runs, each mutation approved first when HIL asks for it), then every
// verifier check, then destruction of the environment. Returns the execution record's body; the
// caller stores it and concludes the run.

import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Outcome } from "../core/loop/types.js";
import type {
  ChangeBounds,
  Environment,
  EnvironmentChanges,
  ExecResult,
} from "../core/ports/sandbox.js";
import { digestOfBytes } from "../core/records/canonical.js";
import type { Problem } from "../core/result.js";
import { withoutIgnored } from "../core/taskpack/ignore.js";
import { type NetworkPolicy, targetKey } from "../core/taskpack/network.js";
import { applyParsedDiff, type ParsedDiff } from "../core/taskpack/patch.js";
import { type AdmittedPlan, type AdmittedStep, stepEffect } from "../core/taskpack/plan-check.js";
import {
  changedOutside,
  changedUnder,
  changesAsDiff,
  type SnapshotDiff,
} from "../core/taskpack/snapshot-diff.js";
import type { PackResources, VerifierCheck } from "../core/taskpack/task-pack.js";
import { baselineDigest, type CapturedChangeset, captureChangeset } from "./changeset.js";
import type { RuntimeContext } from "./context.js";
import type { RunPhase } from "./events.js";
import { commandDetail, stepFailureReason } from "./output-tail.js";
import type {
  CheckRecord,
  NetworkReport,
  ReportedConnection,
  RunReportBody,
  StepRecord,
} from "./records.js";
import { makeRecord } from "./records.js";
import type { LoadedPack } from "./task-pack.js";

const EXCERPT_BYTES = 2048;
/** An observe-read step reads at most this much in all (the rest is cut and flagged). */
export const OBSERVE_READ_MAX_BYTES = 1 << 20;
/** A diff is applied to a file of at most this size. */
const PATCH_READ_MAX_BYTES = 16 << 20;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Approval = "approved" | "not-required";

/** Why a run stops before its verifier: the conclusion it gets. */
export interface Halt {
  readonly outcome: Outcome;
  readonly refusal?: string;
}

export interface RunInput {
  readonly query: string;
  readonly proposalRef: string;
  readonly plan: AdmittedPlan;
  readonly pack: LoadedPack;
  /** At each step boundary: has the loop been cancelled, or its deadline passed? */
  readonly boundary: () => Promise<Halt | undefined>;
}

/** What a run did: the report (its execution record is built from it) and when. */
export interface RunResult {
  readonly report: Omit<RunReportBody, "execution/ref">;
  readonly startedAt: string;
  readonly endedAt: string;
  /** A verified run's change to its baseline, read before its environment was destroyed. */
  readonly changeset?: CapturedChangeset;
}

export function environmentRefOf(proposalRef: string): string {
  return `environment:${proposalRef.slice(proposalRef.lastIndexOf(":") + 1)}`;
}

/**
 * The stable name of a run's environment (its directory is `warrant-env-<name>`): the same on every
 * attempt at the run, so a resumed host finds a directory its dead predecessor made before it could
 * journal it. Distinct per loop and proposal: two runs never share a name.
 */
export function environmentNameOf(query: string, proposalRef: string): string {
  return `run-${createHash("sha256").update(`${query}\n${proposalRef}`).digest("hex").slice(0, 32)}`;
}

/** What a connection was made during: a step, a check, or neither (after the last of them). */
type During = { "step/id": string } | { "check/name": string } | Record<string, never>;

/** A run's egress record, each connection tagged with the step or check it was made during. */
class Egress {
  /** The run's environment, once it is made. */
  env: Environment | undefined;
  /** The step or check each recorded connection was made during, by its index in the log. */
  private readonly tags: During[] = [];

  /** Tag the connections made since the last call with `during`; those connections. */
  take(during: During): ReportedConnection[] {
    const log = this.env?.connections?.();
    if (log === undefined) return [];
    const fresh = log.list.slice(this.tags.length).map((c) => ({ ...c, ...during }));
    for (const _ of fresh) this.tags.push(during);
    return fresh;
  }

  /** The network report of a run under `network`, none when it has none or made no environment. */
  report(network: NetworkPolicy | undefined): NetworkReport | undefined {
    if (network === undefined || this.env === undefined) return undefined;
    // Anything made after the last step or check (a command's leftover child) goes in untagged.
    this.take({});
    // The final counts: a connection still open at its step's end went on counting its bytes.
    const log = this.env.connections?.() ?? { list: [], omitted: 0 };
    return {
      allow: network.allow.map((t) => targetKey(t.host, t.port)),
      connections: log.list.map((c, i) => ({ ...c, ...this.tags[i] })),
      omitted: log.omitted,
    };
  }
}

/** One run being executed: its context, input, environment's reference, start and egress. */
interface Execution {
  readonly ctx: RuntimeContext;
  readonly input: RunInput;
  readonly envRef: string;
  readonly startedAt: string;
  readonly egress: Egress;
}

export async function executeRun(ctx: RuntimeContext, input: RunInput): Promise<RunResult> {
  const x: Execution = {
    ctx,
    input,
    envRef: environmentRefOf(input.proposalRef),
    startedAt: ctx.clock.now().toISOString(),
    egress: new Egress(),
  };
  // Never a mutation uncontained (docs/spec/containment.md): the loop stops safety-refused. The verifier's commands
  // run in the environment too, so without a backend no run is made at all.
  if (ctx.sandbox.backend === undefined) {
    return finish(x, "refused", [], [], true, "environment/not-contained");
  }
  const early = await input.boundary();
  if (early !== undefined) return finish(x, early.outcome, [], [], true, early.refusal);
  const env = await startEnvironment(x, ctx.sandbox.backend);
  const { steps, halt, mutationFailed } = await runSteps(x, env);
  if (halt !== undefined) {
    const destroyed = await timed(
      x,
      "sandbox-destroy",
      async () => (await env.destroy()).confirmed,
    );
    return finish(x, halt.outcome, steps, [], destroyed, halt.refusal);
  }
  const verdict = await timed(x, "verifier", () =>
    verify(ctx, env, input, mutationFailed, (name) => x.egress.take({ "check/name": name })).catch(
      (e: unknown): Verdict => ({
        outcome: "verification-failed",
        checks: [{ name: "verifier", passed: false, detail: `the host failed: ${String(e)}` }],
      }),
    ),
  );
  const changeset =
    verdict.outcome === "verified"
      ? await keepChangeset(ctx, env, input, x.envRef, verdict.changes)
      : undefined;
  const destroyed = await timed(x, "sandbox-destroy", async () => (await env.destroy()).confirmed);
  if (!destroyed)
    return finish(x, "refused", steps, verdict.checks, false, "rollback/destroy-unconfirmed");
  const done = finish(x, verdict.outcome, steps, verdict.checks, true, verdict.refusal);
  return changeset === undefined ? done : { ...done, changeset };
}

/** The run's end, told (`run-end`) and as its result. */
function finish(
  x: Execution,
  outcome: Outcome,
  steps: readonly StepRecord[],
  checks: readonly CheckRecord[],
  destroyed: boolean,
  refusal?: string,
): RunResult {
  const { ctx, input, envRef, egress } = x;
  const { query, proposalRef } = input;
  ctx.emit({
    kind: "run-end",
    query,
    proposalRef,
    environmentRef: envRef,
    outcome,
    ...(refusal === undefined ? {} : { refusal }),
    environmentMade: egress.env !== undefined,
    environmentDestroyed: destroyed,
    interrupted: false,
  });
  const net = egress.report(input.pack.pack.network);
  return {
    report: {
      "query/id": query,
      "proposal/ref": proposalRef,
      "environment/ref": envRef,
      steps,
      checks,
      outcome,
      ...(refusal === undefined ? {} : { "refusal/code": refusal }),
      "environment/destroyed": destroyed,
      ...(net === undefined ? {} : { network: net }),
      // The weaker sandbox (allowed by the operator) is never silent: the report says so.
      ...(egress.env?.seccomp === false ? { "sandbox/seccomp": false } : {}),
    },
    startedAt: x.startedAt,
    endedAt: ctx.clock.now().toISOString(),
  };
}

/** Runs a phase of the run, telling how long it took (`run-phase`) even when it throws. */
async function timed<T>(x: Execution, phase: RunPhase, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    const durationMs = performance.now() - t0;
    const { query, proposalRef } = x.input;
    x.ctx.emit({ kind: "run-phase", query, proposalRef, phase, durationMs });
  }
}

/** Makes the run's environment, tells it (`run-start`) and journals the run as started. */
async function startEnvironment(x: Execution, backend: string): Promise<Environment> {
  const { ctx, input, envRef } = x;
  const { pack, query, proposalRef } = input;
  const network = pack.pack.network;
  const env = await timed(x, "sandbox-start", () =>
    ctx.sandbox.create(pack.baselineDir, environmentNameOf(query, proposalRef), {
      resources: pack.pack.resources,
      ...(network === undefined ? {} : { network }),
      dependencies: pack.pack.dependencies,
      toolchains: pack.pack.toolchains,
    }),
  );
  x.egress.env = env;
  ctx.emit({
    kind: "run-start",
    query,
    proposalRef,
    environmentRef: envRef,
    backend,
    ...(env.mode === undefined ? {} : { mode: env.mode }),
  });
  await ctx.store.putRecords([
    makeRecord("runStarted", query, {
      "query/id": query,
      "proposal/ref": proposalRef,
      "environment/ref": envRef,
      "environment/dir": env.root,
      "started-at": x.startedAt,
    }),
  ]);
  return env;
}

/** The steps run, and why they stopped before the verifier (a halt) or whether a mutation failed. */
interface StepsDone {
  readonly steps: readonly StepRecord[];
  readonly halt?: Halt;
  readonly mutationFailed: boolean;
}

/** The plan's steps in order, each at a boundary and approved first when HIL asks for it. */
async function runSteps(x: Execution, env: Environment): Promise<StepsDone> {
  const steps: StepRecord[] = [];
  for (const [index, step] of x.input.plan.steps.entries()) {
    const boundary = await x.input.boundary();
    if (boundary !== undefined) return { steps, halt: boundary, mutationFailed: false };
    const mutation = stepEffect(step) === "mutation";
    const approval = mutation ? await approvalOf(x, step) : "not-required";
    if (typeof approval !== "string") return { steps, halt: approval, mutationFailed: false };
    const record = await journaledStep(x, env, step, index, approval);
    steps.push(record);
    if (record.refusal !== undefined) {
      // `environment/limit` is not a loop refusal code: the run concludes with the nearest one.
      const refusal = record.refusal === LIMIT_CODE ? "run/budget-exhausted" : record.refusal;
      return { steps, halt: { outcome: "refused", refusal }, mutationFailed: false };
    }
    if (record.status === "failed" && mutation) return { steps, mutationFailed: true };
  }
  return { steps, mutationFailed: false };
}

/** A mutation's approval when the pack asks for each one, or the halt its answer makes. */
async function approvalOf(x: Execution, step: AdmittedStep): Promise<Approval | Halt> {
  if (x.input.pack.pack.hil !== "each-mutation") return "not-required";
  const answer = await x.ctx.approver.approve({
    query: x.input.query,
    run: x.input.proposalRef,
    step: step.id,
    kind: "mutation",
    description: describeMutation(step),
  });
  if (answer === "denied") return { outcome: "refused", refusal: "hil/denied" };
  if (answer === "expired") return { outcome: "refused", refusal: "hil/expired" };
  if (answer === "cancelled") return { outcome: "cancelled" };
  return "approved";
}

/** One step: journaled as started, run (a host failure recorded, never thrown), and told. */
async function journaledStep(
  x: Execution,
  env: Environment,
  step: AdmittedStep,
  index: number,
  approval: Approval,
): Promise<StepRecord> {
  const { ctx } = x;
  const { query, proposalRef } = x.input;
  // Journal first: a crash from here on concludes this run `unknown`; the step never repeats.
  await ctx.store.putRecords([
    makeRecord("stepStarted", query, {
      "query/id": query,
      "proposal/ref": proposalRef,
      "step/id": step.id,
      index,
      "started-at": ctx.clock.now().toISOString(),
    }),
  ]);
  const stepClass = stepEffect(step);
  ctx.emit({
    kind: "step-start",
    query,
    proposalRef,
    stepId: step.id,
    index,
    class: stepClass,
    action: step.kind,
  });
  const record = await timed(x, "steps", () =>
    runStep(env, step, approval).catch((e: unknown) => hostFailure(step, approval, e)),
  );
  const connections = x.egress.take({ "step/id": step.id });
  const reason = stepFailureReason(record);
  ctx.emit({
    kind: "step-end",
    query,
    proposalRef,
    stepId: step.id,
    class: stepClass,
    action: record.action,
    status: record.status,
    ...(record["exit/code"] === undefined ? {} : { exitCode: record["exit/code"] }),
    ...(record.truncated === undefined ? {} : { truncated: record.truncated }),
    ...(record["timed-out"] === undefined ? {} : { timedOut: record["timed-out"] }),
    ...(record.refusal === undefined ? {} : { refusal: record.refusal }),
    ...(reason === undefined ? {} : { reason }),
    ...(connections.length === 0 ? {} : { connections }),
  });
  return record;
}

/** How much host work reading a run's changes may take (the pack's `resources`). */
function changeBounds(resources: PackResources): ChangeBounds {
  return { maxEntries: resources.changedEntries, timeMs: resources.changeCaptureMs };
}

/**
 * The verified change, kept for `diff` and `apply`; a failure to read it is recorded in it. The
 * walk and the reading of contents together take at most the pack's `changeCaptureMs` on the
 * runtime's clock (the walk is also bounded by the backend); past it the change is incomplete.
 */
async function keepChangeset(
  ctx: RuntimeContext,
  env: Environment,
  input: RunInput,
  envRef: string,
  walked: EnvironmentChanges | undefined,
): Promise<CapturedChangeset> {
  const bounds = changeBounds(input.pack.pack.resources);
  const now = () => ctx.clock.now().getTime();
  const bound = { now, deadline: now() + bounds.timeMs, timeMs: bounds.timeMs };
  const about = {
    query: input.query,
    proposalRef: input.proposalRef,
    environmentRef: envRef,
    baselineDir: input.pack.baselineDir,
    ignore: input.pack.pack.ignore,
  };
  try {
    const changes = walked ?? (await env.changes(bounds));
    return await captureChangeset(env, changes, about, bound);
  } catch (e) {
    return {
      "query/id": about.query,
      "proposal/ref": about.proposalRef,
      "environment/ref": envRef,
      baseline: baselineDigest([]),
      "baseline/dir": about.baselineDir,
      files: [],
      complete: false,
      skipped: [
        {
          code: "changeset/unreadable",
          path: "",
          message: `the change could not be read: ${(e as Error).message}`,
        },
      ],
    };
  }
}

function describeMutation(step: AdmittedStep): string {
  switch (step.kind) {
    case "patch":
      return step.change.kind === "diff"
        ? `patch ${step.path}\n${step.change.diff}`
        : `write ${step.path} (${encoder.encode(step.change.content).length} bytes)\n${step.change.content}`;
    case "command":
      return `command ${step.profile.name}: ${JSON.stringify(step.argv)}`;
    case "observe-command":
    case "observe-read":
      return step.kind;
    default:
      return step satisfies never;
  }
}

/** A step the host itself failed at (an I/O error, not the command): recorded, never thrown. */
function hostFailure(step: AdmittedStep, approval: Approval, e: unknown): StepRecord {
  const code = (e as { code?: unknown }).code;
  const finding: Problem = {
    code: "sandbox/host-error",
    path: "",
    message: `${typeof code === "string" ? `${code}: ` : ""}${(e as Error).message ?? String(e)}`,
  };
  return {
    "step/id": step.id,
    class: stepEffect(step),
    action: step.kind,
    status: "failed",
    excerpt: finding.message,
    approval,
    findings: [finding],
  };
}

function excerpt(text: string): string {
  const bytes = encoder.encode(text);
  return bytes.length <= EXCERPT_BYTES ? text : `${decoder.decode(bytes.slice(0, EXCERPT_BYTES))}…`;
}

/** The step code of a resource-limit breach (kept on the step; the run concludes budget-exhausted). */
export const LIMIT_CODE = "environment/limit";

function execRecord(step: AdmittedStep, r: ExecResult, approval: Approval): StepRecord {
  const text = r.stdout === "" ? r.stderr : `${r.stdout}${r.stderr === "" ? "" : `\n${r.stderr}`}`;
  const limit = r.limit;
  const breach: Partial<StepRecord> =
    limit === undefined
      ? {}
      : {
          status: "failed",
          refusal: LIMIT_CODE,
          limit: { resource: limit.resource, bytes: limit.bytes },
          findings: [
            {
              code: LIMIT_CODE,
              path: "",
              message: `the ${limit.resource} limit of ${limit.bytes} bytes was hit (${limit.via})`,
              detail: { resource: limit.resource, bytes: limit.bytes, via: limit.via },
            },
          ],
        };
  return {
    "step/id": step.id,
    class: stepEffect(step),
    action: step.kind,
    status: r.exitCode === 0 && !r.timedOut ? "ok" : "failed",
    "exit/code": r.exitCode,
    "stdout/digest": digestOfBytes(encoder.encode(r.stdout)),
    "stderr/digest": digestOfBytes(encoder.encode(r.stderr)),
    "output/digest": r.outputDigest,
    truncated: r.truncated,
    "timed-out": r.timedOut,
    excerpt: excerpt(text),
    approval,
    ...breach,
  };
}

async function runStep(
  env: Environment,
  step: AdmittedStep,
  approval: Approval,
): Promise<StepRecord> {
  const base = {
    "step/id": step.id,
    class: stepEffect(step),
    action: step.kind,
    approval,
  } as const;
  switch (step.kind) {
    case "observe-command":
    case "command":
      return execRecord(
        step,
        await env.exec(step.argv, {
          timeoutMs: step.profile.timeoutMs,
          maxOutputBytes: step.profile.maxOutputBytes,
          ...(step.profile.env === undefined ? {} : { env: step.profile.env }),
        }),
        approval,
      );
    case "observe-read": {
      // Reads are capped and never open a FIFO, socket or device (a finding instead).
      const parts: string[] = [];
      const findings: Problem[] = [];
      let left = OBSERVE_READ_MAX_BYTES;
      let truncated = false;
      for (const p of step.paths) {
        const r = await env.readPart(p, left);
        if (!r.ok) {
          const e = r.errors[0] as Problem;
          if (e.code === "sandbox/not-found") parts.push(`--- ${p}\n(missing)`);
          else {
            findings.push(e);
            parts.push(`--- ${p}\n(refused: ${e.code}: ${e.message})`);
          }
          continue;
        }
        left -= r.value.bytes.length;
        truncated ||= r.value.truncated;
        parts.push(
          `--- ${p}\n${decoder.decode(r.value.bytes)}${r.value.truncated ? "\n(cut)" : ""}`,
        );
      }
      const text = parts.join("\n");
      return {
        ...base,
        status: findings.length === 0 ? "ok" : "failed",
        "stdout/digest": digestOfBytes(encoder.encode(text)),
        excerpt: excerpt(text),
        ...(truncated ? { truncated } : {}),
        ...(findings.length === 0 ? {} : { findings }),
      };
    }
    case "patch": {
      let next: string | null;
      if (step.change.kind === "content") next = step.change.content;
      else {
        const current = await env.readPart(step.path, PATCH_READ_MAX_BYTES);
        const met = current.ok
          ? current.value.truncated
            ? {
                code: "sandbox/too-large",
                path: "",
                message: `${step.path}: over ${PATCH_READ_MAX_BYTES} bytes`,
              }
            : undefined
          : (current.errors[0] as Problem).code === "sandbox/not-found"
            ? undefined
            : (current.errors[0] as Problem);
        if (met !== undefined) {
          if (met.code === "workbench/patch-outside-policy")
            return { ...base, status: "failed", excerpt: met.message, refusal: met.code };
          return { ...base, status: "failed", excerpt: met.message, findings: [met] };
        }
        const applied = applyParsedDiff(
          current.ok ? decoder.decode(current.value.bytes) : null,
          step.change.parsed,
        );
        if (!applied.ok)
          return {
            ...base,
            status: "failed",
            excerpt: applied.errors.map((e) => e.message).join("\n"),
          };
        next = applied.value;
      }
      if (next === null)
        return {
          ...base,
          status: "failed",
          excerpt: "removing a file is not a patch this host applies",
        };
      const bytes = encoder.encode(next);
      const written = await env.writeFile(step.path, bytes);
      const refused = written.ok ? undefined : written.errors[0];
      if (refused !== undefined) {
        // Only an escape refuses the run; anything else the write met fails the step.
        if (refused.code !== "workbench/patch-outside-policy")
          return { ...base, status: "failed", excerpt: refused.message, findings: [refused] };
        return { ...base, status: "failed", excerpt: refused.message, refusal: refused.code };
      }
      return { ...base, status: "ok", "stdout/digest": digestOfBytes(bytes) };
    }
    default:
      return step satisfies never;
  }
}

interface Verdict {
  readonly outcome: Outcome;
  readonly refusal?: string;
  readonly checks: readonly CheckRecord[];
  /** The changes the checks read, when no command ran after they were read (reused to keep them). */
  readonly changes?: EnvironmentChanges;
}

/** The verifier's checks as they are reached, each told (`check`) with how long it took. */
class CheckLog {
  readonly checks: CheckRecord[] = [];
  private readonly ctx: Pick<RuntimeContext, "emit">;
  private readonly input: RunInput;
  /** Each check is timed from the end of the one before (the first from the verifier's start). */
  private started = performance.now();

  constructor(ctx: Pick<RuntimeContext, "emit">, input: RunInput) {
    this.ctx = ctx;
    this.input = input;
  }

  add(check: CheckRecord): void {
    this.checks.push(check);
    const { name, passed, detail } = check;
    const now = performance.now();
    this.ctx.emit({
      kind: "check",
      query: this.input.query,
      proposalRef: this.input.proposalRef,
      name,
      passed,
      detail,
      durationMs: now - this.started,
    });
    this.started = now;
  }

  /** The verdict of a verifier stopped by `refusal`, with the checks reached. */
  refused(refusal: string): Verdict {
    return { outcome: "refused", refusal, checks: this.checks };
  }
}

/** The environment's changes against its baseline, or why they could not be read. */
type Found = { diff: SnapshotDiff; raw: EnvironmentChanges } | { failed: string };

/**
 * The environment's changes against its baseline, read once (from its upper layer in overlay
 * mode) within the verifier's deadline; a walk that failed or stopped at a bound fails every check
 * that needs it.
 */
class ChangeReader {
  private found: Found | undefined;
  /** The walk as read, while no command check has run since (a command may write). */
  current: EnvironmentChanges | undefined;
  private readonly ctx: Pick<RuntimeContext, "clock">;
  private readonly env: Environment;
  private readonly pack: LoadedPack["pack"];
  private readonly deadline: number;

  constructor(
    ctx: Pick<RuntimeContext, "clock">,
    env: Environment,
    pack: LoadedPack["pack"],
    deadline: number,
  ) {
    this.ctx = ctx;
    this.env = env;
    this.pack = pack;
    this.deadline = deadline;
  }

  async read(): Promise<Found> {
    if (this.found === undefined) {
      const bounds = changeBounds(this.pack.resources);
      try {
        const left = this.deadline - this.ctx.clock.now().getTime();
        const raw = await this.env.changes({
          ...bounds,
          timeMs: Math.max(1, Math.min(bounds.timeMs, left)),
        });
        this.current = raw;
        this.found = raw.complete
          ? { diff: withoutIgnored(changesAsDiff(raw), this.pack.ignore), raw }
          : { failed: `the change walk stopped: ${raw.findings.map((f) => f.code).join(", ")}` };
      } catch (e) {
        this.found = { failed: `the change walk failed: ${(e as Error).message}` };
      }
    }
    return this.found;
  }
}

async function verify(
  ctx: RuntimeContext,
  env: Environment,
  input: RunInput,
  mutationFailed: boolean,
  tagConnections: (check: string) => void,
): Promise<Verdict> {
  const { pack } = input.pack;
  const log = new CheckLog(ctx, input);
  const names = new Set(pack.verifier.checks.map((c) => c.name));
  const missing = input.plan.expectedChecks.filter((n) => !names.has(n));
  if (missing.length > 0) {
    for (const name of missing)
      log.add({ name, passed: false, detail: "the verifier has no such check" });
    return log.refused("verifier/check-missing");
  }
  const deadline = ctx.clock.now().getTime() + pack.verifier.timeoutMs;
  const changes = new ChangeReader(ctx, env, pack, deadline);
  for (const check of pack.verifier.checks) {
    const left = deadline - ctx.clock.now().getTime();
    if (left <= 0) return log.refused("verifier/timeout");
    if (check.kind === "command") {
      // A command may write: the walk read before it no longer stands for the environment.
      changes.current = undefined;
      const refusal = await commandCheck(env, pack, check, left, log, tagConnections);
      if (refusal !== undefined) return log.refused(refusal);
    } else log.add(changeCheck(check, await changes.read(), pack));
  }
  const passed = !mutationFailed && log.checks.every((c) => c.passed);
  return {
    outcome: passed ? "verified" : "verification-failed",
    checks: log.checks,
    ...(changes.current === undefined ? {} : { changes: changes.current }),
  };
}

/**
 * A command check, run in the environment within what is left of the deadline, its connections
 * tagged with its name: the refusal that stops the verifier, or undefined.
 */
async function commandCheck(
  env: Environment,
  pack: LoadedPack["pack"],
  check: Extract<VerifierCheck, { kind: "command" }>,
  left: number,
  log: CheckLog,
  tagConnections: (check: string) => void,
): Promise<string | undefined> {
  const profile = pack.commands.get(check.command);
  if (profile === undefined || profile.effect !== "observation") {
    log.add({ name: check.name, passed: false, detail: `no observation command ${check.command}` });
    return "verifier/check-missing";
  }
  const r = await env.exec(profile.argv, {
    timeoutMs: Math.min(profile.timeoutMs, left),
    maxOutputBytes: profile.maxOutputBytes,
    ...(profile.env === undefined ? {} : { env: profile.env }),
  });
  tagConnections(check.name);
  if (r.timedOut) {
    log.add({ name: check.name, passed: false, detail: `${check.command} timed out` });
    return "verifier/timeout";
  }
  log.add({
    name: check.name,
    passed: r.exitCode === 0,
    detail: commandDetail(check.command, r.exitCode, r.stdout, r.stderr),
    "exit/code": r.exitCode,
    "output/digest": r.outputDigest,
    truncated: r.truncated,
  });
  return undefined;
}

/** A check of the environment's changes: nothing changed under globs, or only allowed files. */
function changeCheck(
  check: Exclude<VerifierCheck, { kind: "command" }>,
  c: Found,
  pack: LoadedPack["pack"],
): CheckRecord {
  if ("failed" in c) return { name: check.name, passed: false, detail: c.failed };
  const findings = c.raw.findings.length > 0 ? { findings: c.raw.findings } : {};
  switch (check.kind) {
    case "unchanged": {
      const touched = changedUnder(c.diff, check.globs);
      return {
        name: check.name,
        passed: touched.length === 0,
        detail: touched.length === 0 ? "unchanged" : `changed: ${touched.join(", ")}`,
        ...findings,
      };
    }
    case "only-allowed-changed": {
      const outside = changedOutside(c.diff, pack.patchPolicy.allow);
      return {
        name: check.name,
        passed: outside.length === 0,
        detail:
          outside.length === 0
            ? "only allowed files changed"
            : `outside the policy: ${outside.join(", ")}`,
        ...findings,
      };
    }
    default:
      return check satisfies never;
  }
}

/** What the verifier found on a certification run: every check, and whether the patches applied. */
export interface VerifierRun {
  readonly passed: boolean;
  /** False when a patch did not apply (nothing was verified then). */
  readonly applied: boolean;
  readonly checks: readonly CheckRecord[];
  readonly refusal?: string;
  readonly detail?: string;
}

/**
 * The verifier alone, as a run's verdict is reached (a certification of a task): a fresh contained
 * environment of the pack's baseline, each file's diff applied, then every check; the environment
 * is destroyed after. No step is journaled and nothing is written to the ledger; no model is called.
 */
export async function verifyPatched(
  ctx: Pick<RuntimeContext, "sandbox" | "clock" | "emit">,
  pack: LoadedPack,
  patches: readonly { readonly path: string; readonly diff: ParsedDiff }[],
  ref: string,
): Promise<VerifierRun> {
  if (ctx.sandbox.backend === undefined)
    return {
      passed: false,
      applied: false,
      checks: [],
      refusal: "environment/not-contained",
      detail: "no containment backend works here",
    };
  const network = pack.pack.network;
  const env = await ctx.sandbox.create(pack.baselineDir, environmentNameOf("certify", ref), {
    resources: pack.pack.resources,
    ...(network === undefined ? {} : { network }),
    dependencies: pack.pack.dependencies,
    toolchains: pack.pack.toolchains,
  });
  try {
    for (const p of patches) {
      const current = await env.readPart(p.path, PATCH_READ_MAX_BYTES);
      const original = current.ok ? decoder.decode(current.value.bytes) : null;
      const applied = applyParsedDiff(original, p.diff);
      if (!applied.ok || applied.value === null)
        return {
          passed: false,
          applied: false,
          checks: [],
          detail: `${p.path}: ${applied.ok ? "a removal is not applied" : applied.errors.map((e) => e.message).join("; ")}`,
        };
      const written = await env.writeFile(p.path, encoder.encode(applied.value));
      if (!written.ok)
        return {
          passed: false,
          applied: false,
          checks: [],
          detail: written.errors.map((e) => e.message).join("; "),
        };
    }
    const input: RunInput = {
      query: "query:certify",
      proposalRef: ref,
      plan: { hypothesis: "certification", steps: [], expectedChecks: [] },
      pack,
      boundary: async () => undefined,
    };
    const verdict = await verify(ctx as RuntimeContext, env, input, false, () => undefined);
    return {
      passed: verdict.outcome === "verified",
      applied: true,
      checks: verdict.checks,
      ...(verdict.refusal === undefined ? {} : { refusal: verdict.refusal }),
    };
  } finally {
    await env.destroy().catch(() => undefined);
  }
}
