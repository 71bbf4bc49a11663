// Writable agent memory as the store keeps it: append-only versions per key (agent content ID,
// path, scope, namespace), each written by one `memory.write` call of one passage; and the ledger
// record of that call (before and after digests), so an audited or resumed loop sees exactly what
// each passage read and wrote.
import type { MemoryScopeKind } from "../contracts/types/agent-definition.v1.js";
import type * as Wire from "../contracts/types/ledger-records.v1.js";
import { digestOf } from "./canonical.js";
import type { Unsigned } from "./unsigned.js";

export const MEMORY_SCOPES = [
  "shared",
  "namespace",
  "thread",
] as const satisfies readonly MemoryScopeKind[];
export type MemoryScopeName = (typeof MEMORY_SCOPES)[number];

/** Whose memory: `namespace` is "" for shared memory, the loop's query for a thread's. */
export interface MemoryKey {
  /** The writing agent's id (`agent:<CID>`, `#<pointer>` for a sub-agent). */
  readonly agent: string;
  readonly path: string;
  readonly scope: MemoryScopeName;
  readonly namespace: string;
}

/** One stored version of a memory. */
export interface MemoryVersion {
  readonly key: MemoryKey;
  /** 1 for the first write of a key, then +1 per write. */
  readonly version: number;
  readonly content: string;
  /** `digestOf(content)`. */
  readonly digest: string;
  /** The loop and passage whose `memory.write` wrote it, and the write's place in that passage. */
  readonly query: string;
  readonly passageRef: string;
  readonly ordinal: number;
  readonly writtenAt: string;
}

/** What a passage reads of one memory key. */
export interface MemoryRead {
  /**
   * The version the passage sees: the latest, or, for a passage redone after a crash, the one
   * before its interrupted attempt's first write (undefined when there is none).
   */
  readonly seen: MemoryVersion | undefined;
  /** The latest version (what a new write follows). */
  readonly latest: MemoryVersion | undefined;
  /** Versions this passage already wrote (an interrupted attempt's), by ordinal. */
  readonly written: readonly MemoryVersion[];
}

/**
 * The ledger record of one `memory.write` (kind `memoryWrite`), as contracts/ledger-records.v1.json
 * types it, its scope one of MEMORY_SCOPES: `ordinal` is the write's place among the passage's
 * memory writes (1, 2, …); `before/digest` the digest of the content it replaced (null for a key's
 * first version).
 */
export type MemoryWriteBody = Unsigned<Omit<Wire.MemoryWrite, "memory">> & {
  readonly memory: Readonly<Wire.MemoryWrite["memory"]> & { readonly scope: MemoryScopeName };
};

/** The digest memory content is known by. */
export function memoryDigest(content: string): string {
  return digestOf(content);
}

export function memoryWriteBody(
  written: MemoryVersion,
  before: MemoryVersion | undefined,
): MemoryWriteBody {
  return {
    "query/id": written.query,
    "passage/ref": written.passageRef,
    "agent/id": written.key.agent,
    memory: {
      path: written.key.path,
      scope: written.key.scope,
      namespace: written.key.namespace,
    },
    ordinal: written.ordinal,
    version: written.version,
    "before/digest": before?.digest ?? null,
    "after/digest": written.digest,
    "after/bytes": new TextEncoder().encode(written.content).length,
    "written-at": written.writtenAt,
  };
}

/** Same key. */
export function sameMemoryKey(a: MemoryKey, b: MemoryKey): boolean {
  return (
    a.agent === b.agent && a.path === b.path && a.scope === b.scope && a.namespace === b.namespace
  );
}

/** A key's read for a passage, from all of the key's versions in ascending order. */
export function memoryReadOf(versions: readonly MemoryVersion[], passageRef: string): MemoryRead {
  const written = versions.filter((v) => v.passageRef === passageRef);
  const latest = versions.at(-1);
  const first = written[0];
  const seen = first === undefined ? latest : versions.find((v) => v.version === first.version - 1);
  return { seen, latest, written };
}

/** A stable text of a key (for maps and locks). */
export function memoryKeyText(key: MemoryKey): string {
  return JSON.stringify([key.agent, key.path, key.scope, key.namespace]);
}
