// The writable-memory part of the LedgerStore contract: append-only versions per key, each stored
// with its memoryWrite record in one write, one winner per version, fenced writes, and what a
// passage redone after a crash reads. Run by ledgerStoreContract for every store.

import type { LedgerRecord } from "../../core/ports/ledger-store.js";
import { contentRef } from "../../core/records/canonical.js";
import {
  type MemoryKey,
  type MemoryVersion,
  memoryDigest,
  memoryWriteBody,
} from "../../core/records/memory-write.js";
import type { ContractSubject, ContractTestApi } from "./test-api.js";

const Q = "query:memory-1";
const KEY: MemoryKey = { agent: "agent:a1", path: "notes.md", scope: "shared", namespace: "" };
const t0 = new Date("2026-12-01T10:00:00.000Z");

export function memoryVersion(
  version: number,
  content: string,
  passageRef: string,
  ordinal = 1,
  key: MemoryKey = KEY,
): MemoryVersion {
  return {
    key,
    version,
    content,
    digest: memoryDigest(content),
    query: Q,
    passageRef,
    ordinal,
    writtenAt: "2026-12-01T10:00:00.000Z",
  };
}

export function memoryRecord(v: MemoryVersion, before?: MemoryVersion): LedgerRecord {
  const body = memoryWriteBody(v, before);
  return {
    ref: contentRef("warrant-memory-write", body, "ref"),
    kind: "memoryWrite",
    query: v.query,
    body,
  };
}

export function memoryContract(fresh: () => Promise<ContractSubject>, test: ContractTestApi): void {
  const { describe, expect, it } = test;
  describe("writable memory", () => {
    it("starts with no version, then reads the latest one written", async () => {
      const { store } = await fresh();
      expect(await store.readMemory(KEY, "passage:p1")).toEqual({
        seen: undefined,
        latest: undefined,
        written: [],
      });
      const v1 = memoryVersion(1, "first", "passage:p1");
      expect(await store.appendMemory(v1, memoryRecord(v1))).toBe(true);
      const v2 = memoryVersion(2, "second", "passage:p2");
      expect(await store.appendMemory(v2, memoryRecord(v2, v1))).toBe(true);
      const read = await store.readMemory(KEY, "passage:p3");
      expect(read.seen).toEqual(v2);
      expect(read.latest).toEqual(v2);
      expect(read.written).toEqual([]);
      // Each write's record is in the ledger beside it.
      const kinds = (await store.listRecords(Q)).map((r) => r.kind);
      expect(kinds).toEqual(["memoryWrite", "memoryWrite"]);
      // Keys are apart: another namespace reads nothing.
      const other = { ...KEY, scope: "namespace" as const, namespace: "team-a" };
      expect((await store.readMemory(other, "passage:p3")).latest).toBeUndefined();
    });

    it("refuses a version that is not the latest + 1, storing neither it nor its record", async () => {
      const { store } = await fresh();
      const v1 = memoryVersion(1, "first", "passage:p1");
      expect(await store.appendMemory(v1, memoryRecord(v1))).toBe(true);
      const rival = memoryVersion(1, "rival", "passage:p2");
      expect(await store.appendMemory(rival, memoryRecord(rival))).toBe(false);
      const skip = memoryVersion(3, "skip", "passage:p2");
      expect(await store.appendMemory(skip, memoryRecord(skip))).toBe(false);
      expect((await store.readMemory(KEY, "passage:p2")).latest?.content).toBe("first");
      expect(await store.listRecords(Q)).toHaveLength(1);
    });

    it("takes the same write twice as one (a retry or a replay)", async () => {
      const { store } = await fresh();
      const v1 = memoryVersion(1, "first", "passage:p1");
      expect(await store.appendMemory(v1, memoryRecord(v1))).toBe(true);
      expect(await store.appendMemory(v1, memoryRecord(v1))).toBe(true);
      expect(await store.listRecords(Q)).toHaveLength(1);
    });

    it("lets exactly one of many concurrent writers of a version win", async () => {
      const { store } = await fresh();
      const writers = Array.from({ length: 6 }, (_, i) =>
        memoryVersion(1, `writer ${i}`, `passage:w${i}`),
      );
      const won = await Promise.all(writers.map((v) => store.appendMemory(v, memoryRecord(v))));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await store.listRecords(Q)).toHaveLength(1);
    });

    it("shows a redone passage the memory as it was before its earlier attempt wrote", async () => {
      const { store } = await fresh();
      const v1 = memoryVersion(1, "before", "passage:p1");
      await store.appendMemory(v1, memoryRecord(v1));
      const v2 = memoryVersion(2, "by the interrupted attempt", "passage:p2", 1);
      await store.appendMemory(v2, memoryRecord(v2, v1));
      const v3 = memoryVersion(3, "its second write", "passage:p2", 2);
      await store.appendMemory(v3, memoryRecord(v3, v2));
      const read = await store.readMemory(KEY, "passage:p2");
      expect(read.seen).toEqual(v1);
      expect(read.latest).toEqual(v3);
      expect(read.written).toEqual([v2, v3]);
    });

    it("refuses a fenced write under a token that is not the loop's lease", async () => {
      const { store } = await fresh();
      const grant = await store.acquireLease(Q, "worker-a", 10_000, t0);
      const token = grant?.token ?? 0;
      const v1 = memoryVersion(1, "fenced", "passage:p1");
      await expect(
        store.appendMemory(v1, memoryRecord(v1), { query: Q, token: token + 1 }),
      ).rejects.toMatchObject({ code: "store/lease-lost" });
      expect((await store.readMemory(KEY, "passage:p1")).latest).toBeUndefined();
      expect(await store.appendMemory(v1, memoryRecord(v1), { query: Q, token })).toBe(true);
    });

    it("refuses a record of another loop than its version", async () => {
      const { store } = await fresh();
      const v1 = memoryVersion(1, "x", "passage:p1");
      const record = { ...memoryRecord(v1), query: "query:elsewhere" };
      await expect(store.appendMemory(v1, record)).rejects.toMatchObject({
        code: "store/batch-invalid",
      });
    });
  });
}
