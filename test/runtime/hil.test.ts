// The approver decides by the act the store counts: when its own act (from --yes or the terminal)
// loses a race to an operator's act posted from elsewhere, the operator's act decides.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { approvalTarget } from "../../src/core/loop/next-action.js";
import type { OperatorAct } from "../../src/core/ports/ledger-store.js";
import { createApprover } from "../../src/runtime/hil.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";

const Q = "query:hil";
const RUN = `corpus-experiment:sha256:${"R".repeat(43)}`;
const request = {
  query: Q,
  run: RUN,
  step: "fix",
  kind: "mutation" as const,
  description: "patch",
};

/** A memory store in which a rival's act lands just before this host's own post. */
function racedStore(rival: OperatorAct): MemoryLedgerStore {
  const store = new MemoryLedgerStore();
  const post = store.postOperatorAct.bind(store);
  let raced = false;
  store.postOperatorAct = async (act) => {
    if (!raced) {
      raced = true;
      await post(rival);
    }
    return post(act);
  };
  return store;
}

const rival = (kind: "approve" | "deny"): OperatorAct => ({
  query: Q,
  kind,
  target: approvalTarget(RUN, "fix"),
  operator: "node-operator-binding:bob",
  at: "2026-12-01T10:00:00Z",
});

const NOW = new Date("2026-12-01T10:00:00Z");

async function approver(store: MemoryLedgerStore, o: { autoApprove: boolean; asked?: "approve" }) {
  const notes: string[] = [];
  const loop = new LoopLedger(store);
  // An open loop: a waiting approver gives up once its loop stops or passes its deadline.
  await loop.execute(
    Q,
    {
      op: "open",
      query: Q,
      binding: "operator-task-local-binding:hil",
      operator: "node-operator-binding:alice",
      layers: [{ "max/passages": 4, "max/experiments": 1, "max/wall-time-ms": 3_600_000 }],
    },
    NOW,
  );
  const a = createApprover({
    store,
    loop,
    clock: { now: () => NOW },
    sleep: async () => {},
    emit: (e) => {
      if (e.kind === "approval-answered") notes.push(`${e.answer} by ${e.by}`);
    },
    operator: "node-operator-binding:alice",
    autoApprove: o.autoApprove,
    ...(o.asked === undefined ? {} : { ask: async () => o.asked }),
  });
  return { a, notes };
}

describe("the approver reads the act that counts", () => {
  it("--yes that loses to a deny posted first: denied, and the deny is the only act", async () => {
    const store = racedStore(rival("deny"));
    const { a, notes } = await approver(store, { autoApprove: true });
    expect(await a.approve(request)).toBe("denied");
    expect(notes).toEqual(["denied by operator"]);
    expect(await store.readOperatorActs(Q)).toEqual([rival("deny")]);
  });

  it("a terminal approval that loses to a deny: denied", async () => {
    const store = racedStore(rival("deny"));
    const { a } = await approver(store, { autoApprove: false, asked: "approve" });
    expect(await a.approve(request)).toBe("denied");
    expect((await store.readOperatorActs(Q)).map((x) => x.operator)).toEqual([
      "node-operator-binding:bob",
    ]);
  });

  it("--yes that wins: approved, recorded as its own act", async () => {
    const store = new MemoryLedgerStore();
    const { a } = await approver(store, { autoApprove: true });
    expect(await a.approve(request)).toBe("approved");
    expect(await store.readOperatorActs(Q)).toMatchObject([
      { kind: "approve", operator: "node-operator-binding:alice" },
    ]);
  });
});
