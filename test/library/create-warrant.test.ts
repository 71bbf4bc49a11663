// createWarrant as a library user drives it: models written as plain async functions, a memory
// store and the fake sandbox (no bwrap needed), one event stream for the handle and every
// subscriber, and the refusals a user meets (an unknown loop, a model of another specification, a
// role without a model, a pack that does not load).

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { toQueryId, toRecordRef } from "../../src/core/ids.js";
import {
  createWarrant,
  isWarrantError,
  type ModelFunction,
  type ModelProvider,
  type Warrant,
  WarrantError,
  type WarrantEvent,
  type WarrantOptions,
} from "../../src/index.js";
import { fakeSandbox, memoryStore } from "../../src/testing.js";
import { accept, fixtures, plan, result, turn } from "../runtime/harness.js";

const PACK = path.join(fixtures, "task-pack.json");
const goodFix = turn("Plan", plan("good-fix"));

/** A role's model as a plain async function answering its turns in order, then unreachable. */
function answers(...turns: readonly unknown[]): ModelFunction {
  let next = 0;
  return async () => {
    const answer = turns[next++];
    if (answer === undefined) throw new WarrantError("model/script-exhausted", "no answer left");
    return answer as never;
  };
}

const models = () => ({
  implementer: answers(goodFix),
  reviewer: answers(accept),
  summarizer: answers(result),
});

async function warrantWith(options: WarrantOptions = {}): Promise<Warrant> {
  return createWarrant({
    store: memoryStore(),
    models: models(),
    sandbox: fakeSandbox(),
    approver: "auto",
    signer: "none",
    ...options,
  });
}

describe("createWarrant", () => {
  it("drives a pack to success with function models and the fake sandbox; the handle streams every event", async () => {
    const seen: WarrantEvent[] = [];
    const warrant = await warrantWith({ onEvent: (e) => seen.push(e) });
    const handle = warrant.run(PACK);
    const streamed: WarrantEvent[] = [];
    for await (const e of handle) streamed.push(e);
    const outcome = await handle.result;
    expect(outcome.status).toBe("stopped");
    if (outcome.status !== "stopped") return;
    expect(outcome.stop.reason).toBe("succeeded");
    expect(await handle.query).toBe(outcome.query);

    // One stream: the handle and the subscriber saw the same events, each stamped and addressed.
    expect(streamed).toEqual(seen);
    for (const e of streamed) {
      expect(e.query).toBe(outcome.query);
      expect(Number.isNaN(Date.parse(e.at))).toBe(false);
    }
    // Every fact appended is an event, in sequence, with the fact the ledger holds.
    const facts = streamed.flatMap((e) => (e.kind === "fact" ? [e] : []));
    const stored = await warrant.store.readFacts(outcome.query);
    expect(facts.map((f) => f.sequence)).toEqual(stored.map((s) => s.fact.sequence));
    expect(facts.map((f) => f.step)).toEqual(stored.map((s) => s.fact.step));

    const kinds = streamed.map((e) => e.kind);
    expect(kinds[0]).toBe("fact");
    expect(kinds.indexOf("drive-start")).toBeGreaterThan(0);
    expect(kinds.slice(-2)).toEqual(["stop", "drive-end"]);
    for (const k of [
      "passage-start",
      "passage-end",
      "model-call-start",
      "model-call-end",
      "run-start",
      "run-phase",
      "step-start",
      "step-end",
      "check",
      "run-end",
      "approval-answered",
    ])
      expect(kinds).toContain(k);
    // Passages and model calls open and close in pairs.
    expect(kinds.filter((k) => k === "passage-start")).toHaveLength(3);
    expect(kinds.filter((k) => k === "passage-end")).toHaveLength(3);
    expect(kinds.filter((k) => k === "model-call-start")).toHaveLength(3);
    const call = streamed.find((e) => e.kind === "model-call-end");
    expect(call).toMatchObject({ provider: "function:implementer", stop: "complete", valid: true });
    const approval = streamed.find((e) => e.kind === "approval-answered");
    expect(approval).toMatchObject({ approval: "mutation", answer: "approved", by: "auto" });
    const end = streamed.find((e) => e.kind === "drive-end");
    expect(end).toMatchObject({ status: "stopped", stop: "succeeded" });
    await warrant.close();
  });

  it("an iterator started after the drive ended still sees every event, from the first", async () => {
    const warrant = await warrantWith();
    const handle = warrant.run(PACK);
    const outcome = await handle.result;
    const late: string[] = [];
    for await (const e of handle) late.push(e.kind);
    const again: string[] = [];
    for await (const e of handle) again.push(e.kind);
    expect(outcome.status).toBe("stopped");
    expect(late[0]).toBe("fact");
    expect(late.at(-1)).toBe("drive-end");
    expect(again).toEqual(late);
  });

  it("a subscriber that throws reaches neither the drive nor the other subscribers", async () => {
    const others: string[] = [];
    const warrant = await warrantWith({
      onEvent: [
        () => {
          throw new Error("observer bug");
        },
        (e) => others.push(e.kind),
      ],
    });
    const outcome = await warrant.run(PACK).result;
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");
    expect(others.at(-1)).toBe("drive-end");
  });

  it("`telemetry`, the deprecated name of `onEvent`, still subscribes, after onEvent's subscribers", async () => {
    const order: string[] = [];
    const warrant = await warrantWith({
      onEvent: (e) => order.push(`onEvent ${e.kind}`),
      telemetry: (e) => order.push(`telemetry ${e.kind}`),
    });
    await warrant.run(PACK).result;
    expect(order.slice(0, 2)).toEqual(["onEvent fact", "telemetry fact"]);
    expect(order.filter((o) => o.startsWith("onEvent")).length).toBe(order.length / 2);
    const alone: string[] = [];
    const legacy = await warrantWith({ telemetry: [(e) => alone.push(e.kind)] });
    await legacy.run(PACK).result;
    expect(alone.at(-1)).toBe("drive-end");
  });

  it("hands out ids its methods take as they are: loops, show's records, record, events", async () => {
    const queries: string[] = [];
    const warrant = await warrantWith({ onEvent: (e) => queries.push(e.query) });
    const handle = warrant.run(PACK);
    let shownFromEvent: unknown;
    for await (const e of handle)
      if (e.kind === "drive-end") shownFromEvent = await warrant.show(e.query);
    expect(shownFromEvent).toBeDefined();
    const [listed] = await warrant.loops();
    expect(listed?.query).toBe(await handle.query);
    if (listed === undefined) return;
    const view = await warrant.show(listed.query);
    const first = view?.records[0];
    expect(first?.kind).toBe("binding");
    if (first === undefined) return;
    const record = await warrant.record(first.ref);
    expect(record?.ref).toBe(first.ref);
    expect((await warrant.show(record?.query ?? listed.query))?.loop.state).toBe("stopped");
    expect(new Set(queries)).toEqual(new Set([listed.query]));
  });

  it("records the role's model ids in the binding, and resume of a stopped loop drives nothing", async () => {
    const warrant = await warrantWith();
    const { query } = await warrant.run(PACK).result;
    const binding = (await warrant.store.listRecords(query)).find((r) => r.kind === "binding");
    expect(binding?.body).toMatchObject({
      models: {
        implementer: "function:implementer",
        reviewer: "function:reviewer",
        summarizer: "function:summarizer",
      },
    });
    const resumed = warrant.resume(query);
    const kinds: string[] = [];
    for await (const e of resumed) kinds.push(e.kind);
    expect(kinds).toEqual(["stop"]);
    expect((await resumed.result).status).toBe("stopped");
  });

  it("without a sandbox every run is refused environment/not-contained, and no environment is made", async () => {
    const warrant = await warrantWith({ sandbox: "none" });
    const handle = warrant.run(PACK);
    const outcome = await handle.result;
    const runEnd: WarrantEvent[] = [];
    for await (const e of handle) if (e.kind === "run-end") runEnd.push(e);
    expect(runEnd[0]).toMatchObject({
      outcome: "refused",
      refusal: "environment/not-contained",
      environmentMade: false,
    });
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("safety-refused");
  });

  it("runs commands through the fake sandbox's answers: a failing test run fails verification", async () => {
    const sandbox = fakeSandbox({
      exec: (argv) =>
        argv.includes("--test") ? { exitCode: 1, stdout: "not ok 1" } : { exitCode: 0 },
    });
    const warrant = await warrantWith({
      sandbox,
      models: { ...models(), summarizer: answers() },
    });
    const handle = warrant.run(PACK);
    await handle.result;
    const checks: WarrantEvent[] = [];
    for await (const e of handle) if (e.kind === "check") checks.push(e);
    expect(checks).toContainEqual(expect.objectContaining({ name: "tests-pass", passed: false }));
    expect(sandbox.commands).toContainEqual(["node", "--test", "test/"]);
    const concluded = (await warrant.store.readFacts(await handle.query))
      .map((f) => f.fact.step)
      .find((s) => s.kind === "concluded");
    expect(concluded).toMatchObject({ outcome: "verification-failed" });
  });
});

describe("createWarrant refuses", () => {
  it("resume of a loop the store does not hold: loop/not-opened, from result, query and the stream", async () => {
    const warrant = await warrantWith();
    const handle = warrant.resume(toQueryId("query:nowhere"));
    await expect(handle.result).rejects.toMatchObject({ code: "loop/not-opened" });
    await expect(handle.query).rejects.toMatchObject({ code: "loop/not-opened" });
    await expect(
      (async () => {
        for await (const _ of handle) {
          // no event comes
        }
      })(),
    ).rejects.toMatchObject({ code: "loop/not-opened" });
  });

  it("a model object of another specification version, before any loop opens", async () => {
    const stale = {
      specificationVersion: "v0",
      id: "old",
      complete: async () => {
        throw new Error("never called");
      },
    } as unknown as ModelProvider;
    const warrant = await warrantWith({ models: { ...models(), reviewer: stale } });
    const error = await warrant.run(PACK).result.catch((e: unknown) => e);
    expect(isWarrantError(error) && error.code).toBe("model/specification-version");
    expect(await warrant.loops()).toEqual([]);
  });

  it("a role given no model runs on its definition's: an unknown provider refuses before any loop opens", async () => {
    const warrant = await warrantWith({ models: { implementer: answers(goodFix) } });
    const pack = path.join(fixtures, "unknown-provider.task-pack.json");
    const check = await warrant.checkDefinitions(pack);
    expect(check.problems).toEqual([
      expect.objectContaining({
        code: "definition/provider-unknown",
        path: "/agents/reviewer/models/0/provider",
      }),
    ]);
    expect(check.problems[0]?.message).toContain('"gemini"');
    // The implementer's own definition model is not checked: the run overrides it.
    expect(check.agents.implementer?.override).toBe("function:implementer");
    await expect(warrant.run(pack).result).rejects.toMatchObject({
      code: "definition/provider-unknown",
    });
    expect(await warrant.loops()).toEqual([]);
  });

  it("a pack that does not load: its problems' code", async () => {
    const warrant = await warrantWith();
    await expect(
      warrant.run(path.join(fixtures, "no-such-pack.json")).result,
    ).rejects.toMatchObject({ code: "taskpack/read" });
  });

  it("a store URI that names no store: store/uri-invalid", async () => {
    await expect(createWarrant({ store: "mysql://x" })).rejects.toMatchObject({
      code: "store/uri-invalid",
    });
  });

  it("createStore: false and a sqlite: path that does not exist: store/not-found, nothing created", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-create-store-"));
    try {
      await expect(
        createWarrant({ store: "sqlite:missing/ledger.db", cwd, createStore: false }),
      ).rejects.toMatchObject({ code: "store/not-found" });
      expect(readdirSync(cwd)).toEqual([]);
      // The default still creates the store (a library program names its path in code).
      const made = await createWarrant({ store: "sqlite:missing/ledger.db", cwd, signer: "none" });
      await made.close();
      expect(readdirSync(path.join(cwd, "missing"))).toContain("ledger.db");
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("dispatch and work without a job queue: runtime/no-queue", async () => {
    const warrant = await warrantWith();
    await expect(warrant.dispatch(PACK)).rejects.toMatchObject({ code: "runtime/no-queue" });
    expect(await warrant.loops()).toEqual([]);
    await expect(warrant.work({ concurrency: 1 })).rejects.toMatchObject({
      code: "runtime/no-queue",
    });
  });
});

describe("operator acts through the library", () => {
  it("approve and deny name a run's step; renew refuses a time that is none; cancel stops the loop", async () => {
    const warrant = await warrantWith();
    const query = await warrant.open(PACK);
    expect(await warrant.approve("corpus-experiment:sha256:nonexistent", "fix")).toMatchObject({
      ok: false,
      code: "loop/run-missing",
    });
    // Fewer than 8 characters of a digest name no run: the caller must give more.
    expect(await warrant.approve("corpus-experiment:sha256:none", "fix")).toMatchObject({
      ok: false,
      code: "hil/ref-too-short",
    });
    expect(await warrant.renew(query, "not a time")).toMatchObject({
      ok: false,
      code: "loop/renewal-invalid",
    });
    expect(await warrant.answer(query, "yes")).toMatchObject({
      ok: false,
      code: "runtime/no-question",
    });
    expect(await warrant.cancel(query)).toMatchObject({ ok: true, result: "appended" });
    expect(await warrant.cancel(query)).toMatchObject({ ok: true, result: "replayed" });
    expect(await warrant.loops()).toEqual([
      { query, state: "stopped", stop: { reason: "cancelled" }, status: "stopped" },
    ]);
    const shown = await warrant.show(query);
    expect(shown?.loop.stop).toMatchObject({ reason: "cancelled" });
    expect(shown?.records.map((r) => r.kind)).toEqual(["binding"]);
    expect(await warrant.record(toRecordRef(shown?.records[0]?.ref))).toMatchObject({
      kind: "binding",
    });
    expect(await warrant.show(toQueryId("query:nowhere"))).toBeUndefined();
  });
});
