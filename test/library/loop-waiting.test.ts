// What `loops()` says a loop waits on when its drive blocked on a failed passage: the model (no
// valid answer left) or the tools (an MCP server unreachable), with the role and the code; the
// same reading `warrant loops` prints in its WAITING column.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loopsTable, waitingCell } from "../../src/cli/loops-table.js";
import { toQueryId, toRunRef } from "../../src/core/ids.js";
import { createWarrant, type ModelFunction, WarrantError } from "../../src/index.js";
import { fakeSandbox, memoryStore } from "../../src/testing.js";
import { accept, fixtures, plan, result, turn } from "../runtime/harness.js";

function answers(...turns: readonly unknown[]): ModelFunction {
  let next = 0;
  return async () => {
    const answer = turns[next++];
    if (answer === undefined) throw new WarrantError("model/script-exhausted", "no answer left");
    return answer as never;
  };
}

async function blockedListing(pack: string, reviewer: ModelFunction) {
  const warrant = await createWarrant({
    store: memoryStore(),
    models: {
      implementer: answers(turn("Plan", plan("good-fix"))),
      reviewer,
      summarizer: answers(result),
    },
    sandbox: fakeSandbox(),
    approver: "auto",
    signer: "none",
  });
  const outcome = await warrant.run(path.join(fixtures, pack)).result;
  expect(outcome.status).toBe("blocked");
  const rows = await warrant.loops();
  await warrant.close();
  return rows;
}

describe("loops() on a loop blocked by a failed passage", () => {
  it("waits on the model: role and code", async () => {
    const [row] = await blockedListing("task-pack.json", answers());
    expect(row?.waiting).toEqual({
      reason: "model",
      role: "reviewer",
      code: "model/script-exhausted",
      message: "no answer left",
    });
    expect(row?.status).toBe("waiting");
    expect(waitingCell(row?.waiting)).toBe("model (reviewer: model/script-exhausted)");
  });

  it("waits on the tools when an MCP server cannot be reached", async () => {
    const [row] = await blockedListing("mcp-unreachable.task-pack.json", answers(accept));
    expect(row?.waiting).toMatchObject({
      reason: "tool",
      role: "implementer",
      code: "tool/mcp-unavailable",
    });
  });
});

describe("warrant loops as text", () => {
  it("prints a header row and aligned columns; an empty store says so", () => {
    const lines = loopsTable(
      [
        {
          query: toQueryId("query:a"),
          state: "open",
          status: "waiting",
          waiting: {
            reason: "approval",
            run: toRunRef(`corpus-experiment:sha256:${"A".repeat(43)}`),
            step: "fix",
            kind: "mutation",
          },
        },
        {
          query: toQueryId("query:longer-one"),
          state: "stopped",
          stop: { reason: "succeeded" },
          status: "stopped",
          heldBy: "host:1/job-2",
          leaseUntil: "2026-12-02T00:00:00.000Z",
        },
      ],
      "sqlite:l.db",
    );
    expect(lines).toEqual([
      "QUERY             STATE                STATUS   WAITING          HELD BY",
      "query:a           open                 waiting  approval of fix  —",
      "query:longer-one  stopped (succeeded)  stopped  —                host:1/job-2 until 2026-12-02T00:00:00.000Z",
    ]);
    expect(loopsTable([], "sqlite:l.db")).toEqual(["no loops in sqlite:l.db"]);
    expect(waitingCell({ reason: "budget", counter: "max/cycles" })).toBe("budget max/cycles");
    expect(waitingCell({ reason: "deadline", deadline: "x" })).toBe("deadline");
    expect(waitingCell({ reason: "answer", question: "q" })).toBe("answer");
  });
});
