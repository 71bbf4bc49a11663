// The eval's own records, kept in the store beside the loops (under one query that is not a loop's,
// so no loop's ledger or audit changes): each eval's manifest (its set, its cells and their keys and
// queries: everything its report is computed from), why the eval closed a cell's waiting loop, and
// each certification of a task. Every record is content-addressed, so writing one again is a no-op.

import type { PricingTable } from "../../core/eval/eval-set.js";
import { heldQueryId } from "../../core/ids.js";
import type { Role } from "../../core/loop/types.js";
import type { LedgerStore } from "../../core/ports/ledger-store.js";
import { contentRef } from "../../core/records/canonical.js";
import type { CloseReason } from "./outcome.js";

/** Where the eval records live: a query no loop is opened under (loops are `query:` + their id). */
export const EVAL_BOOK = "query:warrant-evals";

export interface ManifestCell {
  readonly task: string;
  readonly agent: string;
  readonly epoch: number;
  readonly key: string;
  readonly query: string;
  /** What each role's model is priced as. */
  readonly priced: Readonly<Partial<Record<Role, string>>>;
}

export interface EvalManifest {
  readonly schema: "warrant-eval-manifest.v1";
  readonly eval: string;
  readonly set: { readonly name: string; readonly digest: string; readonly file: string };
  readonly epochs: number;
  readonly limits: { readonly tokens?: number; readonly costUsd?: number };
  readonly requireCertified: boolean;
  readonly tasks: readonly {
    readonly task: string;
    readonly packDigest: string;
    readonly oracleDigest?: string;
  }[];
  readonly agents: readonly string[];
  readonly cells: readonly ManifestCell[];
  readonly pricing?: PricingTable;
}

export interface CellClosed {
  readonly schema: "warrant-eval-cell-closed.v1";
  readonly query: string;
  readonly key: string;
  readonly why: CloseReason;
}

export type CertificationStatus = "certified" | "flaky" | "broken-oracle" | "passes-without-change";

export interface Certification {
  readonly schema: "warrant-eval-certification.v1";
  readonly task: string;
  readonly packDigest: string;
  readonly oracleDigest: string;
  readonly status: CertificationStatus;
  readonly baseline: { readonly passed: number; readonly runs: number };
  readonly oracle: { readonly passed: number; readonly runs: number };
  readonly "certified-at": string;
  /** The host key's signature over the record's canonical form without it. */
  readonly signature?: { readonly alg: string; readonly keyId: string; readonly sig: string };
}

const KINDS = {
  manifest: { kind: "evalManifest", prefix: "warrant-eval-manifest" },
  closed: { kind: "evalCellClosed", prefix: "warrant-eval-cell-closed" },
  certification: { kind: "evalCertification", prefix: "warrant-eval-certification" },
} as const;

async function put(store: LedgerStore, which: keyof typeof KINDS, body: object): Promise<string> {
  const { kind, prefix } = KINDS[which];
  const ref = contentRef(prefix, body as Record<string, unknown>, "ref");
  await store.putRecords([{ ref, kind, query: heldQueryId(EVAL_BOOK), body }]);
  return ref;
}

async function list<T>(store: LedgerStore, which: keyof typeof KINDS): Promise<T[]> {
  const kind = KINDS[which].kind;
  return (await store.listRecords(EVAL_BOOK))
    .filter((r) => r.kind === kind)
    .map((r) => r.body as T);
}

export const putManifest = (store: LedgerStore, m: EvalManifest) => put(store, "manifest", m);
export const putClosed = (store: LedgerStore, c: CellClosed) => put(store, "closed", c);
export const putCertification = (store: LedgerStore, c: Certification) =>
  put(store, "certification", c);

/** The manifest of an eval (the one written last, should a set's file have moved). */
export async function manifestOf(
  store: LedgerStore,
  evalId: string,
): Promise<EvalManifest | undefined> {
  return (await list<EvalManifest>(store, "manifest")).filter((m) => m.eval === evalId).at(-1);
}

export async function manifests(store: LedgerStore): Promise<EvalManifest[]> {
  return list<EvalManifest>(store, "manifest");
}

/** Why the eval closed each loop it closed, by query. */
export async function closedReasons(store: LedgerStore): Promise<Map<string, CloseReason>> {
  const out = new Map<string, CloseReason>();
  for (const c of await list<CellClosed>(store, "closed")) out.set(c.query, c.why);
  return out;
}

/** The latest certification of each (pack digest, oracle digest). */
export async function certifications(store: LedgerStore): Promise<Map<string, Certification>> {
  const out = new Map<string, Certification>();
  for (const c of await list<Certification>(store, "certification"))
    out.set(`${c.packDigest} ${c.oracleDigest}`, c);
  return out;
}
