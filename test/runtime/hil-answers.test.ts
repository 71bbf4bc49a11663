// Every way an approval is answered (src/runtime/hil.ts): an act already posted, --yes, the
// approver's own prompt (approve or deny, with its text), an act posted while it waits, the loop
// stopped or past its deadline, and the events and acts each one leaves.
import { describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { approvalTarget } from "../../src/core/loop/next-action.js";
import type { OperatorAct } from "../../src/core/ports/ledger-store.js";
import type { Emit } from "../../src/runtime/events.js";
import { type Ask, createApprover } from "../../src/runtime/hil.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";

const Q = "query:hil-answers";
const RUN = `corpus-experiment:sha256:${"H".repeat(43)}`;
const ALICE = "node-operator-binding:alice";
const BOB = "node-operator-binding:bob";
const T0 = Date.parse("2026-12-01T10:00:00Z");
const WALL = 3_600_000;
const request = {
  query: Q,
  run: RUN,
  step: "fix",
  kind: "mutation" as const,
  description: "patch src/a.ts",
};
const about = { query: Q, proposalRef: RUN, step: "fix", approval: "mutation" };
const TARGET = approvalTarget(RUN, "fix");

const act = (kind: "approve" | "deny", operator = BOB, target = TARGET): OperatorAct => ({
  query: Q,
  kind,
  target,
  operator,
  at: "2026-12-01T10:00:00Z",
});

interface Setup {
  autoApprove?: boolean;
  ask?: Ask;
  askedText?: string;
  pollMs?: number;
  /** Called on each sleep, with the number of sleeps so far. */
  onSleep?: (n: number, store: MemoryLedgerStore, loop: LoopLedger) => Promise<void>;
  open?: boolean;
}

/** An approver over a memory store with the loop Q opened at T0 (unless open: false). */
async function setup(o: Setup = {}) {
  const store = new MemoryLedgerStore();
  const loop = new LoopLedger(store);
  let now = T0;
  if (o.open !== false) {
    await loop.execute(
      Q,
      {
        op: "open",
        query: Q,
        binding: "operator-task-local-binding:hil",
        operator: ALICE,
        layers: [{ "max/passages": 4, "max/experiments": 1, "max/wall-time-ms": WALL }],
      },
      new Date(T0),
    );
  }
  const events: Parameters<Emit>[0][] = [];
  const sleeps: number[] = [];
  const approver = createApprover({
    store,
    loop,
    clock: { now: () => new Date(now) },
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
      if (sleeps.length > 50) throw new Error("the approver kept waiting");
      await o.onSleep?.(sleeps.length, store, loop);
    },
    emit: (e) => events.push(e),
    operator: ALICE,
    autoApprove: o.autoApprove ?? false,
    ...(o.ask === undefined ? {} : { ask: o.ask }),
    ...(o.askedText === undefined ? {} : { askedText: o.askedText }),
    ...(o.pollMs === undefined ? {} : { pollMs: o.pollMs }),
  });
  const answered = () =>
    events.flatMap((e) => (e.kind === "approval-answered" ? [`${e.answer} by ${e.by}`] : []));
  const setNow = (ms: number) => {
    now = ms;
  };
  return { store, loop, approver, events, sleeps, answered, setNow };
}

describe("an act posted before the request decides at once", () => {
  it.each([
    ["approve", "approved"],
    ["deny", "denied"],
  ] as const)(
    "%s → %s by the operator, with no request and no act of its own",
    async (kind, answer) => {
      const s = await setup({ autoApprove: true, ask: async () => "approve" });
      await s.store.postOperatorAct(act(kind));
      expect(await s.approver.approve(request)).toBe(answer);
      expect(s.events).toEqual([{ kind: "approval-answered", ...about, answer, by: "operator" }]);
      expect(await s.store.readOperatorActs(Q)).toEqual([act(kind)]);
      expect(s.sleeps).toEqual([]);
    },
  );
  it("without --yes: nothing is announced, asked or posted", async () => {
    let asked = 0;
    const s = await setup({
      ask: async () => {
        asked += 1;
        return "approve";
      },
    });
    await s.store.postOperatorAct(act("deny"));
    let posted = 0;
    const post = s.store.postOperatorAct.bind(s.store);
    s.store.postOperatorAct = async (a) => {
      posted += 1;
      return post(a);
    };
    expect(await s.approver.approve(request)).toBe("denied");
    expect(s.events).toEqual([
      { kind: "approval-answered", ...about, answer: "denied", by: "operator" },
    ]);
    expect(asked).toBe(0);
    expect(posted).toBe(0);
  });
  it("an act for another step or another loop does not", async () => {
    const s = await setup({ autoApprove: true });
    await s.store.postOperatorAct(act("deny", BOB, approvalTarget(RUN, "other-step")));
    await s.store.postOperatorAct({ ...act("deny"), query: "query:elsewhere" });
    expect(await s.approver.approve(request)).toBe("approved");
    expect(s.answered()).toEqual(["approved by auto"]);
  });
});

describe("--yes", () => {
  it("approves at once and records an approval act of this operator, at the clock's time", async () => {
    const s = await setup({ autoApprove: true });
    s.setNow(T0 + 5000);
    expect(await s.approver.approve(request)).toBe("approved");
    expect(s.events).toEqual([
      { kind: "approval-answered", ...about, answer: "approved", by: "auto" },
    ]);
    expect(await s.store.readOperatorActs(Q)).toEqual([
      {
        query: Q,
        kind: "approve",
        target: TARGET,
        text: "approved automatically",
        operator: ALICE,
        at: "2026-12-01T10:00:05.000Z",
      },
    ]);
  });
  it("an approval that loses the race to another approval is still approved, by the operator", async () => {
    const s = await setup({ autoApprove: true });
    const post = s.store.postOperatorAct.bind(s.store);
    s.store.postOperatorAct = async (a) => {
      await post(act("approve"));
      return post(a);
    };
    expect(await s.approver.approve(request)).toBe("approved");
    expect(s.answered()).toEqual(["approved by operator"]);
  });
});

describe("the approver's prompt", () => {
  it("asks after announcing the request, and records its approval with the default text", async () => {
    const asked: string[] = [];
    let signal: AbortSignal | undefined;
    const s = await setup({
      ask: async (r, sig) => {
        asked.push(r.description);
        signal = sig;
        expect(sig.aborted).toBe(false);
        return "approve";
      },
    });
    expect(await s.approver.approve(request)).toBe("approved");
    expect(asked).toEqual(["patch src/a.ts"]);
    expect(s.events).toEqual([
      { kind: "approval-requested", ...about, description: "patch src/a.ts" },
      { kind: "approval-answered", ...about, answer: "approved", by: "prompt" },
    ]);
    expect(await s.store.readOperatorActs(Q)).toMatchObject([
      { kind: "approve", text: "answered by the approver", operator: ALICE, target: TARGET },
    ]);
    // Once answered, the prompt is told to stop.
    expect(signal?.aborted).toBe(true);
  });
  it("records a denial with the text it is given", async () => {
    const s = await setup({ ask: async () => "deny", askedText: "denied at the terminal" });
    expect(await s.approver.approve(request)).toBe("denied");
    expect(s.answered()).toEqual(["denied by prompt"]);
    expect(await s.store.readOperatorActs(Q)).toMatchObject([
      { kind: "deny", text: "denied at the terminal", operator: ALICE },
    ]);
  });
  it("a prompt that fails or gives no answer leaves the approver waiting for an act", async () => {
    for (const ask of [
      async () => {
        throw new Error("no terminal");
      },
      async () => undefined,
    ] as Ask[]) {
      const s = await setup({
        ask,
        onSleep: async (n, store) => {
          if (n === 3) await store.postOperatorAct(act("deny"));
        },
      });
      expect(await s.approver.approve(request)).toBe("denied");
      expect(s.answered()).toEqual(["denied by operator"]);
      expect(s.sleeps).toHaveLength(3);
      expect(await s.store.readOperatorActs(Q)).toEqual([act("deny")]);
    }
  });
  it("the prompt is aborted when an act from elsewhere answers first", async () => {
    let signal: AbortSignal | undefined;
    const s = await setup({
      ask: (_r, sig) => {
        signal = sig;
        return new Promise((resolve) => sig.addEventListener("abort", () => resolve(undefined)));
      },
      onSleep: async (n, store) => {
        if (n === 2) await store.postOperatorAct(act("approve"));
      },
    });
    expect(await s.approver.approve(request)).toBe("approved");
    expect(s.answered()).toEqual(["approved by operator"]);
    expect(signal?.aborted).toBe(true);
  });
  it("a prompt's answer that loses the race to another act: that act decides", async () => {
    const s = await setup({ ask: async () => "approve" });
    const post = s.store.postOperatorAct.bind(s.store);
    s.store.postOperatorAct = async (a) => {
      await post(act("deny"));
      return post(a);
    };
    expect(await s.approver.approve(request)).toBe("denied");
    expect(s.answered()).toEqual(["denied by operator"]);
  });
});

describe("waiting", () => {
  it("polls every pollMs (200 by default) until an act arrives", async () => {
    const s = await setup({
      onSleep: async (n, store) => {
        if (n === 4) await store.postOperatorAct(act("approve"));
      },
    });
    expect(await s.approver.approve(request)).toBe("approved");
    expect(s.sleeps).toEqual([200, 200, 200, 200]);
    expect(s.answered()).toEqual(["approved by operator"]);
    const t = await setup({
      pollMs: 50,
      onSleep: async (n, store) => {
        if (n === 2) await store.postOperatorAct(act("deny"));
      },
    });
    expect(await t.approver.approve(request)).toBe("denied");
    expect(t.sleeps).toEqual([50, 50]);
  });
  it("ends cancelled, by the loop, when the loop is stopped while it waits", async () => {
    const s = await setup({
      onSleep: async (n, _store, loop) => {
        if (n === 2) await loop.execute(Q, { op: "cancel" }, new Date(T0 + 1000));
      },
    });
    expect(await s.approver.approve(request)).toBe("cancelled");
    expect(s.answered()).toEqual(["cancelled by loop"]);
    expect(s.sleeps).toHaveLength(2);
    expect(await s.store.readOperatorActs(Q)).toEqual([]);
  });
  it("ends expired at the deadline exactly, and not a poll before", async () => {
    const s = await setup({ pollMs: WALL / 4 });
    expect(await s.approver.approve(request)).toBe("expired");
    // Polled at T0, +¼, +½, +¾ of the wall time: open; at the deadline itself: expired.
    expect(s.sleeps).toHaveLength(4);
    expect(s.answered()).toEqual(["expired by loop"]);
    expect(await s.store.readOperatorActs(Q)).toEqual([]);
  });
  it("waits on past the old deadline once the loop is renewed", async () => {
    const s = await setup({
      pollMs: WALL / 2,
      onSleep: async (n, store, loop) => {
        if (n === 1) {
          await loop.execute(
            Q,
            { op: "renew", deadline: "2026-12-01T11:30:00Z" },
            new Date(T0 + WALL / 2),
          );
        }
        if (n === 3) await store.postOperatorAct(act("approve"));
      },
    });
    // Polls at T0, +½ h, +1 h (the old deadline, renewed), then the act decides.
    expect(await s.approver.approve(request)).toBe("approved");
    expect(s.sleeps).toHaveLength(3);
  });
  it("ends expired when the loop has no document (never opened)", async () => {
    const s = await setup({ open: false });
    expect(await s.approver.approve(request)).toBe("expired");
    expect(s.answered()).toEqual(["expired by loop"]);
    expect(s.sleeps).toEqual([]);
  });
});
