// The loop the audit tests tamper with: written through the signing store on the memory store,
// with every kind of record (a plan, its review, an approved mutation run, its conclusion, and for
// a verified run its changeset), and what those tests need to audit its rows.
import { expect } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { auditLoop } from "../../src/core/loop/audit.js";
import { approvalTarget } from "../../src/core/loop/next-action.js";
import type { LoopCommand } from "../../src/core/loop/types.js";
import type { OperatorAct, RawLoop } from "../../src/core/ports/ledger-store.js";
import { base64url } from "../../src/core/records/canonical.js";
import { buildExecution } from "../../src/core/records/execution.js";
import { toLedgerRecord } from "../../src/core/records/ledger-record.js";
import { operatorActRef } from "../../src/core/records/operator-act.js";
import { buildProposal } from "../../src/core/records/proposal.js";
import { buildReview } from "../../src/core/records/review.js";
import { publicKeyOf } from "../../src/core/records/signature.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { type PassageTranscript, transcriptRecord } from "../../src/runtime/passage-transcript.js";
import { makeRecord } from "../../src/runtime/records.js";
import { signingStore } from "../../src/runtime/signing-store.js";
import { at, BINDING, OPERATOR, open, QUERY } from "./gwt.js";

export const KEY = new Uint8Array(32).fill(5);
export const NEXT = new Uint8Array(32).fill(6);
export const OTHER = new Uint8Array(32).fill(8);
export const AGENT = "agent:a1";
export const PLAN = {
  hypothesis: "h",
  steps: [{ id: "fix", action: "patch", path: "a", content: "b" }],
};
export const VERDICT = { decision: "accept", findings: [] };

export interface Built {
  readonly store: MemoryLedgerStore;
  readonly rows: RawLoop;
  readonly acts: readonly OperatorAct[];
  readonly proposal: string;
}

/**
 * A loop of every record kind: plan, review, an approved mutation run, its conclusion (a verified
 * one with its changeset, which stops the loop), and the head a drive signs when it ends.
 */
export async function built(
  outcome: "verification-failed" | "verified" = "verification-failed",
): Promise<Built> {
  const store = new MemoryLedgerStore();
  let t = 0;
  const signing = signingStore(store, KEY, { now: () => at(t) });
  const ledger = new LoopLedger(signing);
  const exec = async (c: LoopCommand, records: Parameters<typeof ledger.execute>[3] = []) => {
    t += 1;
    const d = await ledger.execute(QUERY, c, at(t), records);
    expect(d.result).toBe("appended");
  };
  const binding = makeRecord("binding", QUERY, { "query/id": QUERY, "binding/ref": BINDING });
  await exec(open(), [binding]);
  const end = (ref: string, role: string, message: unknown, extra: object = {}) =>
    makeRecord("passageEnd", QUERY, {
      "query/id": QUERY,
      "passage/ref": ref,
      role,
      "agent/id": AGENT,
      message,
      ...extra,
    });
  await exec({ op: "charge-passage", role: "implementer", agent: AGENT, passage: "passage:p1" });
  const transcript = transcriptRecord(
    QUERY,
    { schema: "warrant.passage-transcript.v1", entries: [] } as unknown as PassageTranscript,
    "passage:p1",
  );
  await signing.putRecords([
    transcript,
    end(
      "passage:p1",
      "implementer",
      { type: "Plan", payload: PLAN },
      { "transcript/ref": transcript.ref },
    ),
  ]);
  const proposal = toLedgerRecord(
    "proposal",
    buildProposal({
      query: QUERY,
      agentId: AGENT,
      passageRef: "passage:p1",
      candidate: PLAN,
      evidence: [],
      createdAt: at(2).toISOString(),
    }),
  );
  await exec({ op: "open-cycle", proposal: proposal.ref }, [proposal]);
  await exec({ op: "charge-passage", role: "reviewer", agent: AGENT, passage: "passage:r1" });
  const review = buildReview({
    query: QUERY,
    proposalRef: proposal.ref,
    agentId: AGENT,
    passageRef: "passage:r1",
    verdict: VERDICT,
    createdAt: at(4).toISOString(),
  });
  await signing.putRecords([
    end("passage:r1", "reviewer", { type: "Verdict", payload: VERDICT }, { subject: proposal.ref }),
    toLedgerRecord("review", review),
  ]);
  await exec({ op: "admit-run", proposal: proposal.ref });
  await signing.putRecords([
    makeRecord("runStarted", QUERY, {
      "query/id": QUERY,
      "proposal/ref": proposal.ref,
      "environment/ref": "environment:e1",
    }),
  ]);
  const act: OperatorAct = {
    query: QUERY,
    kind: "approve",
    target: approvalTarget(proposal.ref, "fix"),
    operator: OPERATOR,
    at: at(6).toISOString(),
  };
  expect(await signing.postOperatorAct(act)).toEqual({ posted: true });
  await signing.putRecords([
    makeRecord("stepStarted", QUERY, {
      "query/id": QUERY,
      "proposal/ref": proposal.ref,
      "step/id": "fix",
    }),
  ]);
  const execution = toLedgerRecord(
    "execution",
    buildExecution({
      query: QUERY,
      proposalRef: proposal.ref,
      environmentRef: "environment:e1",
      steps: [
        {
          id: "fix",
          effectClass: "mutation",
          exitStatus: 0,
          stdoutDigest: "sha256:x",
          stderrDigest: "sha256:y",
          truncated: false,
        },
      ],
      checks: [],
      outcome,
      startedAt: at(6).toISOString(),
      endedAt: at(7).toISOString(),
      admittedBy: {
        reviewRef: review["review/ref"],
        admission: "auto",
        hil: "each-mutation",
        approvals: [{ step: "fix", act: operatorActRef(act) }],
      },
    }),
  );
  await signing.putRecords([
    makeRecord("runReport", QUERY, {
      "query/id": QUERY,
      "proposal/ref": proposal.ref,
      "execution/ref": execution.ref,
      outcome,
    }),
    ...(outcome === "verified"
      ? [
          makeRecord("changeset", QUERY, {
            "query/id": QUERY,
            "proposal/ref": proposal.ref,
            "execution/ref": execution.ref,
            files: [],
            complete: true,
          }),
        ]
      : []),
  ]);
  await exec({ op: "conclude", proposal: proposal.ref, execution: execution.ref, outcome }, [
    execution,
  ]);
  await signing.sealHead(QUERY, outcome === "verified" ? "stop" : "block");
  return {
    store,
    rows: await store.readRawLoop(QUERY),
    acts: await store.readOperatorActs(QUERY),
    proposal: proposal.ref,
  };
}

export const pub = async (k: Uint8Array) => base64url(await publicKeyOf(k));

export async function audit(b: Pick<Built, "rows" | "acts">, expectedKey?: string) {
  return auditLoop({
    query: QUERY,
    rows: b.rows,
    acts: b.acts,
    now: at(100),
    ...(expectedKey === undefined ? {} : { expectedKey }),
  });
}

export async function firstError(b: Pick<Built, "rows" | "acts">, expectedKey?: string) {
  const r = await audit(b, expectedKey);
  if (r.ok) throw new Error("expected the audit to refuse");
  return r.errors[0];
}

export type Row = RawLoop["records"][number];
export const body = (r: Row) => JSON.parse(r.text) as Record<string, unknown>;

/** The rows with the records `f` maps (undefined: deleted). */
export function withRecords(b: Built, f: (r: Row) => Row | undefined): Built {
  return {
    ...b,
    rows: { ...b.rows, records: b.rows.records.flatMap((r) => f(r) ?? []) },
  };
}

export const factOf = (b: Built, kind: string, nth = 0) =>
  b.rows.facts.filter((f) => f.kind === kind)[nth]?.sequence ?? -1;
