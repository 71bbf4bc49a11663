// Writable agent memory as the stores keep it: the shape every store checks before it writes a
// version, and the row a SQL store reads back.
import type { LedgerRecord } from "../../core/ports/ledger-store.js";
import {
  MEMORY_SCOPES,
  type MemoryKey,
  type MemoryScopeName,
  type MemoryVersion,
} from "../../core/records/memory-write.js";
import { WarrantError } from "../../core/result.js";
import { assertRecordShape } from "./batch.js";

/** The key's columns' values, in the order the stores' key conditions name them. */
export function memoryKeyValues(k: MemoryKey): string[] {
  return [k.agent, k.path, k.scope, k.namespace];
}

/** A memory version row as SQLite and PostgreSQL return it. */
export interface MemoryRow {
  readonly agent: string;
  readonly path: string;
  readonly scope: string;
  readonly namespace: string;
  readonly version: number | string;
  readonly content: string;
  readonly digest: string;
  readonly query: string;
  readonly passage_ref: string;
  readonly ordinal: number | string;
  readonly written_at: string;
}

export const MEMORY_COLUMNS =
  "agent, path, scope, namespace, version, content, digest, query, passage_ref, ordinal, written_at";

/** Throws `store/batch-invalid` for a version or record no store may hold. */
export function assertMemoryShape(version: MemoryVersion, record: LedgerRecord): void {
  assertRecordShape(record, version.query);
  const { key } = version;
  const positive = (n: number) => Number.isSafeInteger(n) && n >= 1;
  if (
    typeof key.agent !== "string" ||
    typeof key.path !== "string" ||
    typeof key.namespace !== "string" ||
    !(MEMORY_SCOPES as readonly string[]).includes(key.scope) ||
    !positive(version.version) ||
    !positive(version.ordinal) ||
    typeof version.content !== "string" ||
    typeof version.passageRef !== "string"
  ) {
    throw new WarrantError(
      "store/batch-invalid",
      "a memory version needs a key, a version ≥ 1 and content",
    );
  }
}

export function memoryOfRow(r: MemoryRow): MemoryVersion {
  return {
    key: {
      agent: r.agent,
      path: r.path,
      scope: r.scope as MemoryScopeName,
      namespace: r.namespace,
    },
    version: Number(r.version),
    content: r.content,
    digest: r.digest,
    query: r.query,
    passageRef: r.passage_ref,
    ordinal: Number(r.ordinal),
    writtenAt: r.written_at,
  };
}

/** The row values of a version, in MEMORY_COLUMNS order. */
export function memoryRowValues(v: MemoryVersion): unknown[] {
  return [
    v.key.agent,
    v.key.path,
    v.key.scope,
    v.key.namespace,
    v.version,
    v.content,
    v.digest,
    v.query,
    v.passageRef,
    v.ordinal,
    v.writtenAt,
  ];
}

/** The same write: a replay, or a retry whose first attempt committed before its answer was lost. */
export function sameWrite(row: MemoryRow | undefined, v: MemoryVersion): boolean {
  return (
    row !== undefined &&
    row.passage_ref === v.passageRef &&
    Number(row.ordinal) === v.ordinal &&
    row.digest === v.digest &&
    row.query === v.query
  );
}
