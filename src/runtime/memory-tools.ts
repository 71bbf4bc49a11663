// Agent memory at run time. Read-only memory (verified by its CID) and writable memory (kept in the
// store per agent content ID, path, scope and namespace) are carried in the system prompt; writable
// memory changes only through the `memory.write` tool, each call a version appended with its
// `memoryWrite` record (before and after digests) in one fenced write. A passage redone after a
// crash reads the memory as its interrupted attempt did, and its writes replay instead of landing
// twice.
import type { LedgerStore } from "../core/ports/ledger-store.js";
import { type ToolHost, toolAnswer, toolFailure } from "../core/ports/tool-host.js";
import { contentRef } from "../core/records/canonical.js";
import {
  type MemoryKey,
  type MemoryRead,
  type MemoryVersion,
  memoryDigest,
  memoryWriteBody,
} from "../core/records/memory-write.js";
import { RECORD_KIND_TABLE } from "../core/records/record-kinds.js";
import type { ToolSpec } from "../core/turn/tool-registry.js";
import type { PreparedMemory } from "./definition-parts.js";
import { ledgerWrite } from "./passage.js";

export const MEMORY_WRITE = "memory.write";
/** The most one writable memory holds (UTF-8 bytes). */
export const MAX_WRITABLE_MEMORY_BYTES = 64 * 1024;

/** One writable memory of an agent, with the key it is stored under for this loop. */
export interface WritableMemory {
  readonly path: string;
  readonly key: MemoryKey;
}

/** The store as memory needs it (the drive's fenced, signing view). */
export type MemoryStore = Pick<LedgerStore, "readMemory" | "appendMemory">;

/** What a passage read of its writable memories, by path. */
export type MemoryReads = ReadonlyMap<string, MemoryRead>;

export async function readWritable(
  store: MemoryStore,
  slots: readonly WritableMemory[],
  passageRef: string,
): Promise<MemoryReads> {
  const reads = await Promise.all(slots.map((s) => store.readMemory(s.key, passageRef)));
  return new Map(slots.map((s, i) => [s.path, reads[i] as MemoryRead]));
}

/** The system prompt's section on memory (empty when the agent has none). */
export function memoryPrompt(
  readOnly: readonly PreparedMemory[],
  slots: readonly WritableMemory[],
  reads: MemoryReads,
): string {
  const parts: string[] = [];
  for (const m of readOnly) parts.push(`Memory ${m.path} (read-only):\n\n${m.text}`);
  for (const s of slots) {
    const seen = reads.get(s.path)?.seen;
    const head = `Memory ${s.path} (yours to change with ${MEMORY_WRITE}; ${seen === undefined ? "empty" : `version ${seen.version}`}):`;
    parts.push(seen === undefined ? head : `${head}\n\n${seen.content}`);
  }
  return parts.join("\n\n");
}

/** What the passage saw of each writable memory, for its transcript. */
export function memorySeen(slots: readonly WritableMemory[], reads: MemoryReads): unknown[] {
  return slots.map((s) => {
    const seen = reads.get(s.path)?.seen;
    return {
      path: s.path,
      scope: s.key.scope,
      namespace: s.key.namespace,
      version: seen?.version ?? 0,
      digest: seen?.digest ?? null,
    };
  });
}

function spec(slots: readonly WritableMemory[]): ToolSpec {
  return {
    name: MEMORY_WRITE,
    description:
      "Replace (or append to) one of your writable memories; the next passage reads it. Every write is recorded.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", enum: slots.map((s) => s.path) },
        content: { type: "string" },
        mode: { type: "string", enum: ["replace", "append"] },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
    effect: "observation",
  };
}

export interface MemoryWriteContext {
  readonly store: MemoryStore;
  readonly query: string;
  readonly passageRef: string;
  readonly now: () => Date;
}

/** The memory's ledger record (kind `memoryWrite`). */
export function memoryWriteRecord(written: MemoryVersion, before: MemoryVersion | undefined) {
  const body = memoryWriteBody(written, before);
  const { prefix } = RECORD_KIND_TABLE.memoryWrite;
  return {
    ref: contentRef(prefix, body, "ref"),
    kind: "memoryWrite",
    query: written.query,
    body,
  };
}

/** `memory.write` for one passage; no tool when the agent has no writable memory. */
export function memoryTools(
  slots: readonly WritableMemory[],
  reads: MemoryReads,
  ctx: MemoryWriteContext,
): ToolHost {
  const specs = slots.length === 0 ? [] : [spec(slots)];
  // What this passage knows of each memory: the version it sees, then each it writes.
  const current = new Map(slots.map((s) => [s.path, reads.get(s.path)?.seen]));
  const latest = new Map(slots.map((s) => [s.path, reads.get(s.path)?.latest]));
  let ordinal = 0;
  return {
    specs: () => specs,
    async call(name, args) {
      const slot = slots.find((s) => s.path === args.path);
      if (name !== MEMORY_WRITE || slot === undefined)
        return toolFailure("tool/unknown", `no writable memory ${JSON.stringify(args.path)}`);
      const n = ++ordinal;
      const before = current.get(slot.path);
      const added = String(args.content ?? "");
      const content = args.mode === "append" ? `${before?.content ?? ""}${added}` : added;
      const bytes = new TextEncoder().encode(content).length;
      if (bytes > MAX_WRITABLE_MEMORY_BYTES) {
        return toolFailure(
          "memory/too-large",
          `memory ${slot.path} would hold ${bytes} bytes; it holds at most ${MAX_WRITABLE_MEMORY_BYTES}`,
        );
      }
      const digest = memoryDigest(content);
      // The same write by this passage's interrupted attempt: it is in the ledger already.
      const earlier = reads.get(slot.path)?.written.find((v) => v.ordinal === n);
      if (earlier !== undefined && earlier.digest === digest) {
        current.set(slot.path, earlier);
        return toolAnswer(`memory ${slot.path} written (version ${earlier.version})`);
      }
      const last = latest.get(slot.path);
      const version: MemoryVersion = {
        key: slot.key,
        version: (last?.version ?? 0) + 1,
        content,
        digest,
        query: ctx.query,
        passageRef: ctx.passageRef,
        ordinal: n,
        writtenAt: ctx.now().toISOString(),
      };
      const stored = await ledgerWrite(() =>
        ctx.store.appendMemory(version, memoryWriteRecord(version, last)),
      );
      if (!stored) {
        return toolFailure(
          "memory/conflict",
          `memory ${slot.path} was changed by another writer since this passage read it; it is unchanged`,
        );
      }
      current.set(slot.path, version);
      latest.set(slot.path, version);
      return toolAnswer(`memory ${slot.path} written (version ${version.version})`);
    },
  };
}
