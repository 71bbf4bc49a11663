// The complete audit of a stored loop (`warrant loop check --store`, `warrant loop check BUNDLE`):
// every row parses and its kind column agrees with what it holds; the hash chain, the charge keys
// and every fact's legality (check.ts); every record reproduces its content ref and carries an
// Ed25519 signature by the host key pinned at the loop's opening (or a key a signed rotation
// reached), and that key is one the caller trusts when it names any; every record a fact or another
// record names is there and agrees (audit-records.ts); every operator act is signed; and the signed
// chain heads match the stored chain and cover every conclusion, stop and act (audit-heads.ts), so
// truncation, rollback and re-chained edits are found. Each problem is reported at the first fact
// it touches.
import { base64url, contentRef } from "../records/canonical.js";
import { hasValidContentRef } from "../records/content-ref.js";
import type { HostKeyBody, KeyRotationBody } from "../records/host-records.js";
import { operatorActRef } from "../records/operator-act.js";
import {
  isRecordKind,
  kindOfRef,
  type LedgerRecordKind,
  OUTSIDE_REF_FIELD,
  RECORD_KIND_TABLE,
} from "../records/record-kinds.js";
import { type RecordSignature, verifyRecordSignature } from "../records/signature.js";
import { fail, ok, type Result } from "../result.js";
import { type AuditedRecord, Findings, type Located } from "./audit-findings.js";

export { type AuditedRecord, Findings, type Located } from "./audit-findings.js";

import type { OperatorAct, RawLoop, StoredFact } from "../ports/ledger-store.js";
import { actFactOf, actSignatureProblems, headProblems, type StoredHead } from "./audit-heads.js";
import { recordProblems } from "./audit-records.js";
import { chainProblem, checkFacts, problem, projectionSchemaProblems } from "./check.js";
import type { LoopState } from "./state.js";
import type { Fact } from "./types.js";

export interface AuditInput {
  readonly query: string;
  readonly rows: RawLoop;
  /** The operator acts that count, in order. */
  readonly acts: readonly OperatorAct[];
  /**
   * The host public key (unpadded base64url) the loop must be vouched for by: the pinned key or
   * one a signed rotation reached. Shorthand for `trusted: {keys: [key], source: "--key"}`.
   */
  readonly expectedKey?: string;
  /**
   * Keys the caller trusts, held outside the store (`--key`, a trusted-keys file): the loop must be
   * vouched for by one of them (`records/key-not-trusted` otherwise), and is then pinned. Without
   * any, the pinned key is taken as found, and reported as not pinned.
   */
  readonly trusted?: TrustAnchor;
  /** Refuse a loop whose key is not pinned by a trusted key (`audit/key-not-pinned`). */
  readonly requirePinned?: boolean;
  /** The projection is validated as of this instant. */
  readonly now: Date;
}

/** Public keys (unpadded base64url) trusted from one source (`--key`, a file's path). */
export interface TrustAnchor {
  readonly keys: readonly string[];
  readonly source: string;
}

export interface AuditReport {
  readonly state: LoopState;
  /** The key pinned at the opening, and every key reached from it by a signed rotation. */
  readonly keys: readonly string[];
  /** Where the trusted key that vouches for the loop came from; absent when it is not pinned. */
  readonly pinnedBy?: string;
  readonly records: number;
  /** The highest sequence a verified signed head covers (0 when none). */
  readonly signedThrough: number;
  /** The operator acts the signed heads cover (every act that counts, when valid). */
  readonly actsCovered: number;
  /** The latest head that matches the chain, as stored (only its sequence and hash are checked). */
  readonly lastHead?: StoredHead;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Whether a parsed row is a fact in form: an object whose `step` is an object naming its kind. What
 * its fields hold is judged after, by checkFacts (sequence, time, the legality of each step), as for
 * every loop read.
 */
function isFactInForm(x: unknown): x is Fact {
  return isObject(x) && isObject(x.step) && typeof x.step.kind === "string";
}

/** Parse the fact rows; the first row that is not a fact ends the audit there. */
function parseFacts(query: string, rows: RawLoop["facts"], found: Findings): StoredFact[] {
  const stored: StoredFact[] = [];
  for (const [i, row] of rows.entries()) {
    const fact = parse(row.text);
    if (!isFactInForm(fact)) {
      found.add(
        { fact: i },
        "store/row-invalid",
        `fact row ${row.sequence} of ${query} is not a fact in JSON`,
      );
      return stored;
    }
    if (row.kind !== fact.step.kind) {
      found.add(
        { fact: i },
        "store/kind-mismatch",
        `fact ${row.sequence}: the stored kind ${JSON.stringify(row.kind)} is not its step's (${fact.step.kind})`,
      );
    }
    if (row.sequence !== fact.sequence) {
      found.add(
        { fact: i },
        "store/row-mismatch",
        `fact row ${row.sequence} holds a fact numbered ${String(fact.sequence)}`,
      );
    }
    stored.push({ fact, chargeKey: row.chargeKey, hash: row.hash });
  }
  return stored;
}

/** The ref a record's body gives, by the rule of its kind. */
function refOf(kind: LedgerRecordKind, body: Readonly<Record<string, unknown>>): string {
  const spec = RECORD_KIND_TABLE[kind];
  return spec.refField === undefined
    ? contentRef(spec.prefix, body, OUTSIDE_REF_FIELD)
    : String(body[spec.refField]);
}

function soundRef(kind: LedgerRecordKind, ref: string, body: Readonly<Record<string, unknown>>) {
  const spec = RECORD_KIND_TABLE[kind];
  if (spec.refField === undefined)
    return !Object.hasOwn(body, OUTSIDE_REF_FIELD) && refOf(kind, body) === ref;
  return body[spec.refField] === ref && hasValidContentRef(spec.prefix, spec.refField, body);
}

function signatureKey(body: Readonly<Record<string, unknown>>): string | undefined {
  const s = body.signature as Partial<RecordSignature> | undefined;
  return isObject(s) && typeof s["key/public"] === "string" ? s["key/public"] : undefined;
}

function keyBytes(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return undefined;
  const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return base64url(bytes) === text ? bytes : undefined;
}

async function verifiedBy(body: Readonly<Record<string, unknown>>, key: string): Promise<boolean> {
  const bytes = keyBytes(key);
  return bytes !== undefined && verifyRecordSignature(body, bytes);
}

/**
 * The keys of the loop: the one pinned by its single host-key record (self-signed), and those a
 * rotation signed by an already trusted key reached.
 */
async function loopKeys(
  records: readonly AuditedRecord[],
  found: Findings,
  trusted: TrustAnchor | undefined,
): Promise<Set<string>> {
  const pins = records.filter((r) => r.kind === "hostKey" && r.sound && r.body !== undefined);
  const keys = new Set<string>();
  if (pins.length === 0) {
    found.add(
      { fact: 0 },
      "records/key-missing",
      "no host key is pinned for this loop: its records cannot be verified",
    );
    return keys;
  }
  if (pins.length > 1) {
    found.add({ fact: 0 }, "records/key-conflict", `${pins.length} host keys are pinned`);
    return keys;
  }
  const pin = (pins[0] as AuditedRecord).body as Readonly<Record<string, unknown>>;
  const pinned = (pin as Partial<HostKeyBody>)["key/public"];
  if (typeof pinned !== "string" || !(await verifiedBy(pin, pinned))) {
    found.add(
      { fact: 0 },
      "records/signature-invalid",
      "the host key record is not signed by the key it pins",
    );
    return keys;
  }
  keys.add(pinned);
  const rotations = records.filter((r) => r.kind === "keyRotation" && r.sound);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rotations) {
      const body = r.body as Readonly<Record<string, unknown>>;
      const { "key/next": next, "key/previous": previous } = body as Partial<KeyRotationBody>;
      if (typeof next !== "string" || typeof previous !== "string") continue;
      if (keys.has(next) || !keys.has(previous) || keyBytes(next) === undefined) continue;
      if (!(await verifiedBy(body, previous))) continue;
      keys.add(next);
      grew = true;
    }
  }
  if (trusted !== undefined && !trusted.keys.some((k) => keys.has(k))) {
    const named =
      trusted.keys.length === 1 ? trusted.keys[0] : `any of ${trusted.keys.length} keys`;
    found.add(
      { fact: 0 },
      "records/key-not-trusted",
      `the loop is pinned to host key ${pinned}${keys.size > 1 ? " (and keys rotated to from it)" : ""}, not to ${named} trusted by ${trusted.source}`,
    );
  }
  return keys;
}

/** The complete audit of one stored loop. */
export async function auditLoop(input: AuditInput): Promise<Result<AuditReport>> {
  const { query, rows } = input;
  const found = new Findings();
  if (rows.facts.length === 0)
    return fail([problem("loop/not-opened", "", `no loop ${query} in the store`)]);
  const stored = parseFacts(query, rows.facts, found);
  if (stored.length < rows.facts.length) return fail(found.sorted());
  const broken = chainProblem(query, stored);
  if (broken !== undefined) return fail([...found.sorted(), broken]);
  const folded = checkFacts(stored.map((s) => s.fact));
  if (!folded.ok) return fail([...found.sorted(), ...folded.errors]);
  const facts = stored.map((s) => s.fact);

  // Every record: parsed, its kind column agreeing with its ref, its ref reproducing.
  const parsed = rows.records.map((row, index) => {
    const value = parse(row.text);
    const body = isObject(value) ? value : undefined;
    const kind = isRecordKind(row.kind) && kindOfRef(row.ref) === row.kind ? row.kind : undefined;
    const sound =
      body !== undefined &&
      kind !== undefined &&
      row.query === query &&
      body["query/id"] === query &&
      soundRef(kind, row.ref, body);
    return { index, ref: row.ref, kind: row.kind, body, sound, signed: false, known: kind };
  });
  const touch = touchOf(facts, parsed, input.acts);
  for (const r of parsed) {
    const at = touch(r);
    const row = rows.records[r.index] as RawLoop["records"][number];
    if (r.body === undefined) {
      found.add(at, "store/row-invalid", `record ${r.ref}: its stored body is not a JSON object`);
    } else if (r.known === undefined) {
      found.add(
        at,
        "store/kind-mismatch",
        `record ${r.ref}: the stored kind ${JSON.stringify(r.kind)} is not the kind its ref names`,
      );
    } else if (row.query !== query || r.body["query/id"] !== query) {
      found.add(at, "records/mismatch", `record ${r.ref} belongs to another loop`);
    } else if (!r.sound) {
      found.add(
        at,
        "store/record-mismatch",
        `record ${r.ref}: its content does not reproduce its ref (edited after it was made)`,
      );
    }
  }
  const trusted: TrustAnchor | undefined =
    input.expectedKey !== undefined
      ? { keys: [input.expectedKey], source: "--key" }
      : input.trusted;
  const keys = await loopKeys(parsed, found, trusted);
  const pinnedBy = trusted?.keys.some((k) => keys.has(k)) ? trusted.source : undefined;
  if (input.requirePinned === true && pinnedBy === undefined && keys.size > 0) {
    found.add(
      { fact: 0 },
      "audit/key-not-pinned",
      `the loop is signed by host key ${[...keys][0]}, which is not pinned: name a trusted key with --key or in a trusted-keys file outside the store`,
    );
  }
  const audited: AuditedRecord[] = [];
  for (const r of parsed) {
    let signed = false;
    if (r.body !== undefined && r.known !== undefined && keys.size > 0) {
      const key = signatureKey(r.body);
      const at = touch(r);
      if (r.body.signature === undefined) {
        found.add(at, "records/signature-missing", `record ${r.ref} (${r.kind}) is not signed`);
      } else if (key === undefined || !keys.has(key)) {
        found.add(
          at,
          "records/signature-key",
          `record ${r.ref} (${r.kind}) is signed by ${key ?? "no named key"}, not by a host key of this loop`,
        );
      } else if (!(await verifiedBy(r.body, key))) {
        found.add(
          at,
          "records/signature-invalid",
          `record ${r.ref} (${r.kind}): its signature does not verify over its content`,
        );
      } else {
        signed = true;
      }
    }
    audited.push({
      index: r.index,
      ref: r.ref,
      kind: r.kind,
      body: r.body,
      sound: r.sound,
      signed,
    });
  }
  const heads = headProblems(stored, audited, input.acts, found);
  actSignatureProblems(facts, audited, input.acts, found);
  recordProblems(facts, audited, input.acts, touch, found);
  for (const p of projectionSchemaProblems(folded.value, input.now)) {
    found.add({ fact: facts.length - 1 }, p.code, p.message);
  }
  if (found.size > 0) return fail(found.sorted());
  return ok({
    state: folded.value,
    keys: [...keys],
    ...(pinnedBy === undefined ? {} : { pinnedBy }),
    records: audited.length,
    signedThrough: heads.signedThrough,
    actsCovered: heads.actsCovered,
    ...(heads.last === undefined ? {} : { lastHead: heads.last }),
  });
}

/** What locating a record needs. */
interface RecordRow {
  readonly index: number;
  readonly ref: string;
  readonly kind: string;
  readonly body: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The fact a record touches: the one that names it, or that it belongs to; for a record whose body
 * cannot be read, the fact of the record that names it (a passage end names its transcript).
 */
function touchOf(
  facts: readonly Fact[],
  records: readonly RecordRow[],
  acts: readonly OperatorAct[],
): (r: RecordRow) => Located {
  const actFact = actFactOf(facts);
  const byAct = new Map(acts.map((a) => [operatorActRef(a), actFact(a)]));
  const byPassage = new Map<string, number>();
  const byProposal = new Map<string, { cycle?: number; admit?: number; conclude?: number }>();
  const byRef = new Map<string, number>();
  const proposalOf = (ref: string) => {
    let e = byProposal.get(ref);
    if (e === undefined) {
      e = {};
      byProposal.set(ref, e);
    }
    return e;
  };
  facts.forEach((f, i) => {
    const s = f.step;
    // Only these kinds name a passage or a proposal; the others (opened, renewed, cancelled) place
    // nothing.
    if (s.kind === "passage-charged") {
      if (!byPassage.has(s["passage/ref"])) byPassage.set(s["passage/ref"], i);
    } else if (s.kind === "cycle-opened") {
      proposalOf(s["proposal/ref"]).cycle ??= i;
      byRef.set(s["proposal/ref"], i);
    } else if (s.kind === "run-admitted") {
      proposalOf(s["proposal/ref"]).admit ??= i;
    } else if (s.kind === "concluded") {
      proposalOf(s["proposal/ref"]).conclude ??= i;
      byRef.set(s["execution/ref"], i);
    }
  });
  const str = (x: unknown) => (typeof x === "string" ? x : "");
  for (const r of records) {
    const transcript = r.kind === "passageEnd" ? str(r.body?.["transcript/ref"]) : "";
    const passage = byPassage.get(str(r.body?.["passage/ref"]));
    if (transcript !== "" && passage !== undefined && !byRef.has(transcript))
      byRef.set(transcript, passage);
  }
  return (r) => {
    const named = byRef.get(r.ref);
    if (named !== undefined) return { fact: named };
    const b = r.body;
    if (b === undefined) return { record: r.index };
    const run = (p: string) => {
      const e = byProposal.get(p);
      return e?.conclude ?? e?.admit ?? e?.cycle;
    };
    let fact: number | undefined;
    // By the kind its ref names: a kind column may have been changed.
    const kind = kindOfRef(r.ref) ?? r.kind;
    switch (kind) {
      case "binding":
      case "hostKey":
        fact = 0;
        break;
      case "keyRotation":
      case "head": {
        // The last fact the sequence counts, within the loop (the first for a sequence below 1).
        const n = kind === "head" ? b.sequence : b["at/sequence"];
        fact = typeof n === "number" ? Math.max(0, Math.min(n, facts.length) - 1) : 0;
        break;
      }
      case "actSignature":
        fact = byAct.get(str(b["act/ref"]));
        break;
      case "review":
        fact =
          byPassage.get(str(b["passage/ref"])) ?? byProposal.get(str(b["proposal/ref"]))?.cycle;
        break;
      case "passageEnd":
      case "transcript":
      case "memoryWrite":
        fact = byPassage.get(str(b["passage/ref"]));
        break;
      case "runStarted":
      case "stepStarted":
        fact = byProposal.get(str(b["proposal/ref"]))?.admit;
        break;
      case "execution":
      case "runReport":
      case "changeset":
        fact = run(str(b["proposal/ref"]));
        break;
      default:
        fact = undefined;
    }
    return fact === undefined ? { record: r.index } : { fact };
  };
}
