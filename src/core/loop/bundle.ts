// An audit bundle (`warrant export QUERY --bundle`): one JSON file holding everything `warrant loop
// check BUNDLE` needs to audit a loop offline: its fact rows and record rows exactly as stored
// (signed heads and the pinned host key among the records), the operator acts that count, the
// public key, the seed-valid loop document, and the signed head it was exported under (signed at
// the export when the exporter holds the host key, else the latest head stored).

import type { LedgerRecord, OperatorAct, RawLoop } from "../ports/ledger-store.js";
import { canonicalJson } from "../records/canonical.js";
import type { HeadBody } from "../records/host-records.js";
import { fail, type Problem, type Result } from "../result.js";
import { type AuditReport, auditLoop, type TrustAnchor } from "./audit.js";
import { checkLoopDocument } from "./check.js";
import { project } from "./project.js";
import type { LoopDocument } from "./types.js";

export const BUNDLE_FORMAT = "warrant-loop-bundle.v1";

export interface LoopBundle {
  readonly format: typeof BUNDLE_FORMAT;
  readonly "query/id": string;
  /** The host key pinned by the loop (as found; the audit checks it), null when none is. */
  readonly "host/key": string | null;
  readonly "exported-at": string;
  /** The ref of the signed head (among `records`) the bundle was exported under; null when none. */
  readonly head: string | null;
  readonly loop: LoopDocument;
  readonly facts: readonly {
    readonly sequence: number;
    readonly "charge-key": string;
    readonly kind: string;
    /** The fact's stored JSON text. */
    readonly fact: string;
    readonly hash: string;
  }[];
  readonly records: readonly {
    readonly ref: string;
    readonly kind: string;
    /** The body's stored JSON text. */
    readonly body: string;
  }[];
  readonly acts: readonly OperatorAct[];
}

/**
 * The bundle of a loop's rows and acts. `exportHead`, a head signed for the export (its `signed-at`
 * the export's instant), is added to the records and named; without it the latest head stored is.
 */
export function makeBundle(
  query: string,
  rows: RawLoop,
  acts: readonly OperatorAct[],
  loop: LoopDocument,
  exportedAt: Date,
  exportHead?: LedgerRecord,
): LoopBundle {
  const pin = rows.records.find((r) => r.kind === "hostKey");
  let key: string | null = null;
  try {
    const body =
      pin === undefined ? undefined : (JSON.parse(pin.text) as { "key/public"?: unknown });
    if (typeof body?.["key/public"] === "string") key = body["key/public"];
  } catch {
    key = null;
  }
  const records = rows.records.map((r) => ({ ref: r.ref, kind: r.kind, body: r.text }));
  if (exportHead !== undefined)
    records.push({
      ref: exportHead.ref,
      kind: exportHead.kind,
      body: canonicalJson(exportHead.body),
    });
  return {
    format: BUNDLE_FORMAT,
    "query/id": query,
    "host/key": key,
    "exported-at": exportedAt.toISOString(),
    head: exportHead?.ref ?? latestHead(rows.records),
    loop,
    facts: rows.facts.map((f) => ({
      sequence: f.sequence,
      "charge-key": f.chargeKey,
      kind: f.kind,
      fact: f.text,
      hash: f.hash,
    })),
    records,
    acts: [...acts],
  };
}

/** The stored head that vouches for the most: the highest sequence, then most acts, then latest. */
function latestHead(records: RawLoop["records"]): string | null {
  let best: { ref: string; key: [number, number, string] } | undefined;
  for (const r of records) {
    if (r.kind !== "head") continue;
    let body: Partial<HeadBody>;
    try {
      body = JSON.parse(r.text) as Partial<HeadBody>;
    } catch {
      continue;
    }
    const key: [number, number, string] = [
      Number(body.sequence) || 0,
      Number(body.acts) || 0,
      String(body["signed-at"] ?? ""),
    ];
    const b = best?.key;
    if (
      b === undefined ||
      key[0] > b[0] ||
      (key[0] === b[0] && (key[1] > b[1] || (key[1] === b[1] && key[2] >= b[2])))
    )
      best = { ref: r.ref, key };
  }
  return best?.ref ?? null;
}

/** True when a parsed JSON file says it is a bundle (then it is audited as one). */
export function isBundle(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { format?: unknown }).format === BUNDLE_FORMAT
  );
}

const bad = (path: string, message: string): Problem => ({
  code: "bundle/invalid",
  path,
  message,
});

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** The rows and acts of a bundle, or where its shape is wrong. */
function rowsOf(b: Record<string, unknown>): Result<{
  query: string;
  rows: RawLoop;
  acts: OperatorAct[];
  exportedAt: Date;
}> {
  const query = b["query/id"];
  if (typeof query !== "string") return fail([bad("/query~1id", "must be the loop's query id")]);
  const exportedAt = Date.parse(String(b["exported-at"]));
  if (Number.isNaN(exportedAt)) return fail([bad("/exported-at", "must be an RFC 3339 time")]);
  if (!Array.isArray(b.facts)) return fail([bad("/facts", "must be an array of fact rows")]);
  if (!Array.isArray(b.records)) return fail([bad("/records", "must be an array of record rows")]);
  if (!Array.isArray(b.acts)) return fail([bad("/acts", "must be an array of operator acts")]);
  const facts: RawLoop["facts"][number][] = [];
  for (const [i, f] of b.facts.entries()) {
    if (
      !isObject(f) ||
      !Number.isSafeInteger(f.sequence) ||
      typeof f["charge-key"] !== "string" ||
      typeof f.kind !== "string" ||
      typeof f.fact !== "string" ||
      typeof f.hash !== "string"
    )
      return fail([bad(`/facts/${i}`, "must be {sequence, charge-key, kind, fact, hash}")]);
    facts.push({
      sequence: f.sequence as number,
      chargeKey: f["charge-key"],
      kind: f.kind,
      text: f.fact,
      hash: f.hash,
    });
  }
  const records: RawLoop["records"][number][] = [];
  for (const [i, r] of b.records.entries()) {
    if (
      !isObject(r) ||
      typeof r.ref !== "string" ||
      typeof r.kind !== "string" ||
      typeof r.body !== "string"
    )
      return fail([bad(`/records/${i}`, "must be {ref, kind, body}")]);
    records.push({ ref: r.ref, kind: r.kind, query, text: r.body });
  }
  const acts: OperatorAct[] = [];
  for (const [i, a] of b.acts.entries()) {
    if (!isOperatorActOf(a, query))
      return fail([bad(`/acts/${i}`, "must be an operator act of this loop")]);
    acts.push(a);
  }
  return {
    ok: true,
    value: { query, rows: { facts, records }, acts, exportedAt: new Date(exportedAt) },
  };
}

export interface BundleAuditOptions {
  /** The host public key the loop must be vouched for by (as `--key`). */
  readonly key?: string;
  /** Keys trusted from outside the bundle (ignored when `key` is given). */
  readonly trusted?: TrustAnchor;
  readonly requirePinned?: boolean;
}

/**
 * Audit a bundle offline: the loop as `auditLoop` audits a store; the head it was exported under
 * present, verified, and the latest of its heads; and the bundled loop document checked on its own
 * and equal to the projection of the audited facts at the export.
 */
export async function auditBundle(
  value: unknown,
  options?: string | BundleAuditOptions,
): Promise<Result<AuditReport & { readonly query: string }>> {
  const o: BundleAuditOptions = typeof options === "string" ? { key: options } : (options ?? {});
  if (!isObject(value) || value.format !== BUNDLE_FORMAT)
    return fail([bad("/format", `must be ${JSON.stringify(BUNDLE_FORMAT)}`)]);
  const shaped = rowsOf(value);
  if (!shaped.ok) return shaped;
  const { query, rows, acts, exportedAt } = shaped.value;
  const audited = await auditLoop({
    query,
    rows,
    acts,
    now: exportedAt,
    ...(o.key === undefined ? {} : { expectedKey: o.key }),
    ...(o.trusted === undefined ? {} : { trusted: o.trusted }),
    ...(o.requirePinned === true ? { requirePinned: true } : {}),
  });
  if (!audited.ok) return audited;
  const head = headProblem(value.head, rows, audited.value, exportedAt);
  if (head !== undefined) return fail([head]);
  const doc = checkLoopDocument(value.loop, { now: exportedAt });
  if (!doc.ok) return fail(doc.errors.map((p) => ({ ...p, path: `/loop${p.path}` })));
  const expected = project(audited.value.state, exportedAt);
  if (
    canonicalJson(doc.value.facts) !== canonicalJson(audited.value.state.facts) ||
    canonicalJson(value.loop) !== canonicalJson(expected ?? null)
  ) {
    return fail([
      {
        code: "bundle/loop-mismatch",
        path: "/loop",
        message:
          "the bundled loop document is not the projection of the facts the bundle's rows hold",
      },
    ]);
  }
  return { ok: true, value: { ...audited.value, query } };
}

/**
 * The head a bundle names: one of its records, verified by the audit (so it matches the chain),
 * vouching for at least as much as every other verified head, and — when signed for the export —
 * signed at the export's instant.
 */
function headProblem(
  named: unknown,
  rows: RawLoop,
  report: AuditReport,
  exportedAt: Date,
): Problem | undefined {
  const missing = (message: string): Problem => ({
    code: "bundle/head-missing",
    path: "/head",
    message,
  });
  if (typeof named !== "string")
    return missing("the bundle names no signed head it was exported under (export it again)");
  const row = rows.records.find((r) => r.ref === named && r.kind === "head");
  if (row === undefined)
    return missing(`the head ${named} the bundle names is not among its records`);
  const head = JSON.parse(row.text) as HeadBody;
  const last = report.lastHead;
  const mismatch = (message: string): Problem => ({
    code: "bundle/head-mismatch",
    path: "/head",
    message,
  });
  if (last === undefined || head.sequence < last.sequence || (head.acts ?? 0) < report.actsCovered)
    return mismatch(
      `the bundle was exported under the head of fact ${head.sequence} (${head.acts ?? 0} acts), but it holds a later signed head (fact ${last?.sequence ?? 0}, ${report.actsCovered} acts)`,
    );
  if (head.reason === "export" && head["signed-at"] !== exportedAt.toISOString())
    return mismatch(
      `the head the bundle names was signed for an export at ${head["signed-at"]}, not at this bundle's ${exportedAt.toISOString()}`,
    );
  return undefined;
}

/** Whether `a` is an operator act of the loop `query`, every field of its type. */
function isOperatorActOf(a: unknown, query: string): a is OperatorAct {
  return (
    isObject(a) &&
    a.query === query &&
    (a.kind === "approve" || a.kind === "deny" || a.kind === "answer") &&
    typeof a.target === "string" &&
    typeof a.operator === "string" &&
    typeof a.at === "string" &&
    (a.text === undefined || typeof a.text === "string")
  );
}
