// readRecordBody: every record a real drive writes reads clean under its kind's schema; damaged bodies are refused with `records/body-invalid` and the
// path at fault; and the types the schemas give agree with the hand-written record types.
import path from "node:path";
import { beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import type { ProposalBody, ReviewBody } from "../../src/core/loop/next-action.js";
import type { LedgerRecord } from "../../src/core/ports/ledger-store.js";
import type { ExecutionRecord } from "../../src/core/records/execution.js";
import {
  type HeadBody,
  type HostKeyBody,
  hostSignerOf,
  type KeyRotationBody,
  keyRotationRecord,
} from "../../src/core/records/host-records.js";
import type { ProposalRecord } from "../../src/core/records/proposal.js";
import {
  type RecordBodies,
  type RecordBodyOf,
  readRecordBody,
} from "../../src/core/records/record-body.js";
import { type LedgerRecordKind, RECORD_KIND_TABLE } from "../../src/core/records/record-kinds.js";
import { DESCRIBED_KINDS } from "../../src/core/records/record-schemas.js";
import type { ReviewRecord } from "../../src/core/records/review.js";
import { createWarrant } from "../../src/index.js";
import type { PassageTranscript } from "../../src/runtime/passage-transcript.js";
import type {
  BindingBody,
  PassageEndBody,
  RunReportBody,
  RunStartedBody,
  StepStartedBody,
} from "../../src/runtime/records.js";
import { fakeSandbox, memoryStore, scriptedModel } from "../../src/testing.js";
import { accept, fixtures, HOST_KEY, plan, result, turn } from "../runtime/harness.js";

/** Every record of one loop driven to success in process (memory store, fake sandbox, signed). */
async function drivenRecords(): Promise<readonly LedgerRecord[]> {
  const store = memoryStore();
  const warrant = await createWarrant({
    store,
    models: {
      implementer: scriptedModel([turn("Plan", plan("good-fix"))]),
      reviewer: scriptedModel([accept]),
      summarizer: scriptedModel([result]),
    },
    sandbox: fakeSandbox(),
    approver: "auto",
    signer: hostSignerOf(HOST_KEY),
  });
  const handle = warrant.run(path.join(fixtures, "task-pack.json"));
  for await (const _ of handle) {
    // drained: the records are read from the store afterwards
  }
  const outcome = await handle.result;
  if (outcome.status !== "stopped" || outcome.stop.reason !== "succeeded") {
    throw new Error(`the drive did not succeed: ${JSON.stringify(outcome)}`);
  }
  const rotation = await keyRotationRecord(
    await handle.query,
    HOST_KEY,
    new Uint8Array(32).fill(9),
    3,
    "2026-12-01T10:00:05.000Z",
  );
  return [...(await store.listRecords(await handle.query)), rotation];
}

function kindOf(r: LedgerRecord): LedgerRecordKind {
  if (!Object.hasOwn(RECORD_KIND_TABLE, r.kind)) throw new Error(`unknown kind ${r.kind}`);
  return r.kind as LedgerRecordKind;
}

function codes(kind: LedgerRecordKind, body: unknown): { code: string; path: string }[] {
  const r = readRecordBody(kind, body);
  return r.ok ? [] : r.errors.map((e) => ({ code: e.code, path: e.path }));
}

describe("readRecordBody", () => {
  let records: readonly LedgerRecord[] = [];
  const bodyOf = (kind: string) => {
    const r = records.find((x) => x.kind === kind);
    if (r === undefined) throw new Error(`no ${kind} record`);
    return structuredClone(r.body) as Record<string, unknown>;
  };
  beforeAll(async () => {
    records = await drivenRecords();
  });

  it("reads every record a drive writes, of every described kind", () => {
    const problems = records.flatMap((r) => {
      const read = readRecordBody(kindOf(r), r.body);
      return read.ok ? [] : read.errors.map((e) => `${r.kind} ${e.path}: ${e.message}`);
    });
    expect(problems).toEqual([]);
    // A drive writes a trace record only when it is traced (test/telemetry covers that one).
    const untraced = DESCRIBED_KINDS.filter((k) => k !== "driveTrace" && k !== "memoryWrite");
    expect(new Set(records.map((r) => r.kind))).toEqual(new Set(untraced));
  });

  it("reads a drive's trace context and refuses one that is not a W3C traceparent", () => {
    const body = {
      "query/id": "query:q",
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      holder: "host:1:a",
      "started-at": "2026-12-01T10:00:00.000Z",
    };
    expect(readRecordBody("driveTrace", body).ok).toBe(true);
    expect(codes("driveTrace", { ...body, traceparent: "00-x" })).toEqual([
      { code: "records/body-invalid", path: "/traceparent" },
    ]);
  });

  it("keeps a field its schema does not name: records gain fields compatibly", () => {
    const body = { ...bodyOf("runReport"), "changeset/ref": "warrant-changeset:sha256:x" };
    const read = readRecordBody("runReport", body);
    expect(read.ok && Object.hasOwn(read.value, "changeset/ref")).toBe(true);
  });

  it("reads a run report with its optional network record, and refuses a malformed one at its path", () => {
    const connection = {
      protocol: "http",
      host: "127.0.0.1",
      port: 8080,
      address: "127.0.0.1",
      "address/class": "loopback",
      allowed: true,
      "bytes/up": 10,
      "bytes/down": 20,
      "step/id": "get",
    };
    const network = { allow: ["127.0.0.1:8080"], connections: [connection], omitted: 0 };
    expect(readRecordBody("runReport", { ...bodyOf("runReport"), network }).ok).toBe(true);
    // Reports written before the field existed stay valid.
    expect(Object.hasOwn(bodyOf("runReport"), "network")).toBe(false);
    expect(readRecordBody("runReport", bodyOf("runReport")).ok).toBe(true);
    const bad = { ...network, connections: [{ ...connection, protocol: "ftp", port: 70000 }] };
    expect(codes("runReport", { ...bodyOf("runReport"), network: bad })).toEqual([
      { code: "records/body-invalid", path: "/network/connections/0/protocol" },
      { code: "records/body-invalid", path: "/network/connections/0/port" },
    ]);
    const { omitted: _, ...noCount } = network;
    expect(codes("runReport", { ...bodyOf("runReport"), network: noCount })).toEqual([
      { code: "records/body-invalid", path: "/network" },
    ]);
  });

  it("refuses a body that is not an object", () => {
    for (const body of [null, "text", 3, [], undefined]) {
      expect(codes("proposal", body)).toEqual([{ code: "records/body-invalid", path: "" }]);
    }
  });

  it("refuses a missing field, a wrong type and a value outside its enum, each at its path", () => {
    const { "passage/ref": _, ...noPassage } = bodyOf("passageEnd");
    expect(codes("passageEnd", noPassage)).toEqual([{ code: "records/body-invalid", path: "" }]);
    expect(codes("stepStarted", { ...bodyOf("stepStarted"), index: "0" })).toEqual([
      { code: "records/body-invalid", path: "/index" },
    ]);
    expect(codes("head", { ...bodyOf("head"), reason: "whim" })).toEqual([
      { code: "records/body-invalid", path: "/reason" },
    ]);
    const execution = bodyOf("execution");
    (execution.steps as Record<string, unknown>[])[0] = { "step/id": "s" };
    expect(codes("execution", execution)[0]).toEqual({
      code: "records/body-invalid",
      path: "/steps/0",
    });
  });

  it("refuses a message whose payload is not its type's: a Verdict dressed as a Plan", () => {
    const end = bodyOf("passageEnd");
    end.message = { type: "Plan", payload: { decision: "accept", findings: [] } };
    expect(codes("passageEnd", end).length).toBeGreaterThan(0);
    const review = bodyOf("review");
    review.verdict = { decision: "maybe", findings: [] };
    expect(codes("review", review)).toContainEqual({
      code: "records/body-invalid",
      path: "/verdict/decision",
    });
  });

  it("says what is wrong in words, and bounds the problems a hostile body yields", () => {
    const r = readRecordBody("head", { ...bodyOf("head"), sequence: -1 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]?.message).toMatch(/^a head record's body breaks its schema: /);
    const report = bodyOf("runReport");
    report.steps = Array.from({ length: 100 }, () => ({}));
    const many = readRecordBody("runReport", report);
    expect(many.ok).toBe(false);
    if (!many.ok) expect(many.errors.length).toBeLessThanOrEqual(20);
  });

  it("reads a kind without a schema as an object only", () => {
    const kind = "someFutureKind" as LedgerRecordKind;
    expect(readRecordBody(kind, { any: 1 }).ok).toBe(true);
    expect(readRecordBody(kind, [1]).ok).toBe(false);
  });

  it("describes only kinds of the record table", () => {
    for (const kind of DESCRIBED_KINDS) expect(Object.hasOwn(RECORD_KIND_TABLE, kind)).toBe(true);
  });
});

describe("record body types", () => {
  it("a body read is a value of the hand-written type its writers and readers use", () => {
    expectTypeOf<RecordBodies["proposal"]>().toExtend<ProposalRecord>();
    expectTypeOf<RecordBodies["proposal"]>().toExtend<ProposalBody>();
    expectTypeOf<RecordBodies["review"]>().toExtend<ReviewRecord>();
    expectTypeOf<RecordBodies["review"]>().toExtend<ReviewBody>();
    expectTypeOf<RecordBodies["execution"]>().toExtend<ExecutionRecord>();
    expectTypeOf<RecordBodies["binding"]>().toExtend<BindingBody>();
    expectTypeOf<RecordBodies["passageEnd"]>().toExtend<PassageEndBody>();
    expectTypeOf<RecordBodies["runStarted"]>().toExtend<RunStartedBody>();
    expectTypeOf<RecordBodies["stepStarted"]>().toExtend<StepStartedBody>();
    expectTypeOf<RecordBodies["runReport"]>().toExtend<RunReportBody>();
    expectTypeOf<RecordBodies["hostKey"]>().toExtend<HostKeyBody>();
    expectTypeOf<RecordBodies["keyRotation"]>().toExtend<KeyRotationBody>();
    expectTypeOf<RecordBodies["head"]>().toExtend<HeadBody>();
    // The transcript's entries are read in full by the audit; here its head only.
    expectTypeOf<Omit<RecordBodies["transcript"], "entries" | "signature">>().toExtend<
      Omit<PassageTranscript, "entries">
    >();
  });

  it("and every hand-written body is one its schema accepts (same fields, same optionality)", () => {
    type Own<T> = Exclude<keyof T, "signature">;
    expectTypeOf<Own<RecordBodies["proposal"]>>().toEqualTypeOf<keyof ProposalRecord>();
    expectTypeOf<Own<RecordBodies["review"]>>().toEqualTypeOf<keyof ReviewRecord>();
    expectTypeOf<Own<RecordBodies["execution"]>>().toEqualTypeOf<keyof ExecutionRecord>();
    expectTypeOf<Own<RecordBodies["binding"]>>().toEqualTypeOf<keyof BindingBody>();
    expectTypeOf<Own<RecordBodies["passageEnd"]>>().toEqualTypeOf<keyof PassageEndBody>();
    expectTypeOf<Own<RecordBodies["runStarted"]>>().toEqualTypeOf<keyof RunStartedBody>();
    expectTypeOf<Own<RecordBodies["stepStarted"]>>().toEqualTypeOf<keyof StepStartedBody>();
    expectTypeOf<Own<RecordBodies["hostKey"]>>().toEqualTypeOf<keyof HostKeyBody>();
    expectTypeOf<Own<RecordBodies["keyRotation"]>>().toEqualTypeOf<keyof KeyRotationBody>();
    expectTypeOf<Own<RecordBodies["head"]>>().toEqualTypeOf<keyof HeadBody>();
    expectTypeOf<RecordBodyOf<"binding">>().toEqualTypeOf<RecordBodies["binding"]>();
  });
});
