// Hand-built facts and records for the store tests: legal loop facts, numbered as a loop numbers them.

import type { Fact, Limits, Role, Step } from "../../core/loop/types.js";
import type { LedgerRecord } from "../../core/ports/ledger-store.js";

export const LIMITS: Limits = {
  "max/passages": 8,
  "max/solver-passages": 8,
  "max/reviewer-passages": 8,
  "max/cycles": 4,
  "max/experiments": 2,
  "max/wall-time-ms": 3_600_000,
};

const BASE = Date.parse("2026-12-01T10:00:00Z");

export function at(second: number): string {
  return new Date(BASE + second * 1000).toISOString().replace(".000Z", "Z");
}

export function fact(query: string, sequence: number, step: Step): Fact {
  return { "query/id": query, sequence, "recorded-at": at(sequence), step };
}

export function opened(query: string): Fact {
  return fact(query, 1, {
    kind: "opened",
    "binding/ref": "operator-task-local-binding:fix-slugify",
    limits: LIMITS,
    deadline: at(3600),
    "operator/binding-ref": "node-operator-binding:alice",
  });
}

export function passage(
  query: string,
  sequence: number,
  n: number,
  role: Role = "implementer",
): Fact {
  return fact(query, sequence, {
    kind: "passage-charged",
    role,
    "agent/id": "agent:a1",
    "passage/ref": `passage:p${n}`,
  });
}

/** A 43-character base64url digest tail, distinct per n. */
export function digest(n: number): string {
  return `sha256:${String(n).padStart(43, "A")}`;
}

export function cycle(query: string, sequence: number, n: number): Fact {
  return fact(query, sequence, { kind: "cycle-opened", "proposal/ref": proposalRef(n) });
}

export function proposalRef(n: number): string {
  return `corpus-experiment:${digest(n)}`;
}

export function proposal(
  query: string,
  n: number,
  extra: Record<string, unknown> = {},
): LedgerRecord {
  return {
    ref: proposalRef(n),
    kind: "proposal",
    query,
    body: {
      query,
      "agent/id": "agent:a1",
      candidate: { hypothesis: `h${n}`, steps: [] },
      ...extra,
    },
  };
}

export function review(query: string, n: number): LedgerRecord {
  return {
    ref: `corpus-experiment-review:${digest(n)}`,
    kind: "review",
    query,
    body: { "proposal/ref": proposalRef(n), verdict: { decision: "accept", findings: [] } },
  };
}
