// An audit bundle (`warrant export QUERY --bundle`): one JSON file holding everything `warrant loop
// check BUNDLE` needs to audit a loop offline: its fact rows and record rows exactly as stored
// (signed heads and the pinned host key among the records), the operator acts that count, the
// public key, and the seed-valid loop document.
import { canonicalJson } from "../records/canonical.js";
import { fail, type Problem, type Result } from "../result.js";
import { type AuditReport, auditLoop } from "./audit.js";
import { checkLoopDocument } from "./check.js";
import type { OperatorAct, RawLoop } from "./ledger-store.js";
import type { LoopDocument } from "./types.js";

export const BUNDLE_FORMAT = "warrant-loop-bundle.v1";

export interface LoopBundle {
  readonly format: typeof BUNDLE_FORMAT;
  readonly "query/id": string;
  /** The host key pinned by the loop (as found; the audit checks it), null when none is. */
  readonly "host/key": string | null;
  readonly "exported-at": string;
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

export function makeBundle(
  query: string,
  rows: RawLoop,
  acts: readonly OperatorAct[],
  loop: LoopDocument,
  exportedAt: Date,
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
  return {
    format: BUNDLE_FORMAT,
    "query/id": query,
    "host/key": key,
    "exported-at": exportedAt.toISOString(),
    loop,
    facts: rows.facts.map((f) => ({
      sequence: f.sequence,
      "charge-key": f.chargeKey,
      kind: f.kind,
      fact: f.text,
      hash: f.hash,
    })),
    records: rows.records.map((r) => ({ ref: r.ref, kind: r.kind, body: r.text })),
    acts: [...acts],
  };
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
    if (
      !isObject(a) ||
      a.query !== query ||
      !["approve", "deny", "answer"].includes(String(a.kind)) ||
      typeof a.target !== "string" ||
      typeof a.operator !== "string" ||
      typeof a.at !== "string" ||
      (a.text !== undefined && typeof a.text !== "string")
    )
      return fail([bad(`/acts/${i}`, "must be an operator act of this loop")]);
    acts.push(a as unknown as OperatorAct);
  }
  return {
    ok: true,
    value: { query, rows: { facts, records }, acts, exportedAt: new Date(exportedAt) },
  };
}

/**
 * Audit a bundle offline: the loop as `auditLoop` audits a store, and the bundled loop document
 * checked on its own and holding exactly the audited facts.
 */
export async function auditBundle(
  value: unknown,
  expectedKey?: string,
): Promise<Result<AuditReport & { readonly query: string }>> {
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
    ...(expectedKey === undefined ? {} : { expectedKey }),
  });
  if (!audited.ok) return audited;
  const doc = checkLoopDocument(value.loop, { now: exportedAt });
  if (!doc.ok) return fail(doc.errors.map((p) => ({ ...p, path: `/loop${p.path}` })));
  if (canonicalJson(doc.value.facts) !== canonicalJson(audited.value.state.facts)) {
    return fail([
      {
        code: "bundle/loop-mismatch",
        path: "/loop/facts",
        message: "the bundled loop document does not hold the facts the bundle's rows hold",
      },
    ]);
  }
  return { ok: true, value: { ...audited.value, query } };
}
