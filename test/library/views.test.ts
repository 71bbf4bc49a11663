// warrant.views: what a reader shows of the store without touching it — a loop's status, every
// loop's, its records and conclusion, the approval context, the change, a record's view and body,
// the pending approvals and the change feed — the same answers as the functions over the store,
// and undefined (never a throw) for a loop or record the store does not hold.
import { rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { approvalContext, createWarrant, listPending, loopConclusion } from "../../src/index.js";
import { stepReasonsOf } from "../../src/library/views.js";
import { fakeSandbox, memoryStore } from "../../src/testing.js";
import { answers, fixturePackCopy } from "../helpers/fixture-pack.js";
import { accept, plan, result, turn } from "../runtime/harness.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("warrant.views", () => {
  it("answers as the functions over the store do, and undefined for what the store does not hold", async () => {
    const store = memoryStore();
    const fix = turn("Plan", plan("good-fix"));
    const warrant = await createWarrant({
      store,
      sandbox: fakeSandbox({ exec: () => ({ exitCode: 0, stdout: "ok" }) }),
      signer: "none",
      approver: "auto",
      operator: "otto",
      models: {
        implementer: answers(fix),
        reviewer: answers(accept),
        summarizer: answers(result),
      },
    });
    try {
      const handle = warrant.run(fixturePackCopy(dirs, "warrant-views-"));
      await handle.result;
      const query = await handle.query;
      const views = warrant.views;
      const now = new Date();

      const status = await views.status(query, now);
      expect(status?.document.state).toBe("stopped");
      expect((await views.statuses(now)).map((s) => [s.query, s.document.state])).toEqual([
        [query, "stopped"],
      ]);
      expect(await views.status("no-such-loop", now)).toBeUndefined();

      const records = await views.records(query);
      expect(records).toEqual(await store.listRecords(query));
      expect(await views.conclusion(query)).toEqual(await loopConclusion(store, query));
      expect(await views.approvalContext(query, undefined, now)).toEqual(
        await approvalContext(store, query, now),
      );
      expect(await views.approvalContext("no-such-loop")).toBeUndefined();
      expect(await views.pending(now)).toEqual(await listPending(store, now));

      const first = records[0];
      expect(first).toBeDefined();
      expect(await views.recordBody(first?.ref as string)).toEqual(first?.body);
      expect((await views.recordView(first?.ref as string))?.ref).toBe(first?.ref);
      expect(await views.recordBody("sha256:nothing")).toBeUndefined();
      expect(await views.recordView("sha256:nothing")).toBeUndefined();
      // A run report's view, and an execution's, say why each failed step failed: none here.
      const report = records.find((r) => r.kind === "runReport");
      expect((await views.recordView(report?.ref as string))?.stepReasons).toEqual({});
      const execution = records.find((r) => r.kind === "execution");
      expect((await views.recordView(execution?.ref as string))?.stepReasons).toEqual({});

      await expect(views.change("no-such-loop")).rejects.toMatchObject({ code: "loop/not-opened" });
      expect(views.storeUri).toBe(store.uri);
      expect(views.watch() === undefined).toBe(store.changeFeed === undefined);
    } finally {
      await warrant.close();
    }
  });
});

describe("stepReasonsOf", () => {
  it("gives each failed step's reason by its id, and leaves out steps with none", () => {
    expect(
      stepReasonsOf({
        steps: [
          { "step/id": "a", status: "succeeded", action: "exec" },
          { "step/id": "b", status: "failed", action: "exec", excerpt: "exit 1" },
          { "step/id": "c", status: "failed", action: "patch", excerpt: "hunk 1 does not apply" },
          { "step/id": "d", status: "failed", action: "exec", refusal: "limit/time" },
          {
            "step/id": "e",
            status: "failed",
            action: "write",
            findings: [{ code: "path/escapes", message: "../x leaves the workspace" }],
          },
          { status: "failed", action: "patch", excerpt: "no id" },
        ],
      }),
    ).toEqual({
      c: "hunk 1 does not apply",
      d: "limit/time",
      e: "path/escapes: ../x leaves the workspace",
    });
    expect(stepReasonsOf(undefined)).toEqual({});
    expect(stepReasonsOf({ steps: "none" })).toEqual({});
  });
});
