// A runtime under test: a memory store, the real bwrap sandbox, scripted models per role, a clock the
// test moves, and every runtime event captured (a hook may act on one: post a denial, cancel).
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";
import {
  createScriptedModel,
  type ScriptedModel,
} from "../../src/adapters/models/scripted-model.js";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { createWorkspaceTools } from "../../src/adapters/tools/workspace-tools.js";
import type { LedgerStore } from "../../src/core/loop/ledger-store.js";
import type { Role } from "../../src/core/loop/types.js";
import { ok } from "../../src/core/result.js";
import { createAgentPassages, type ToolsForPassage } from "../../src/runtime/agent-passages.js";
import { type DriveResult, drive } from "../../src/runtime/driver.js";
import { createApprover } from "../../src/runtime/hil.js";
import { loadTaskPack } from "../../src/runtime/load-pack.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { createPassageTools } from "../../src/runtime/passage-tools.js";
import type { RuntimeContext, RuntimeEvent } from "../../src/runtime/ports.js";
import { sandboxPort } from "../../src/runtime/sandbox-bridge.js";
import { startLoop } from "../../src/runtime/session.js";
import type { LoadedPack } from "../../src/runtime/task-pack.js";
import { repoRoot } from "../helpers/cli.js";

export const fixtures = path.join(repoRoot, "test/fixtures/runtime");
export const START = Date.parse("2026-12-01T10:00:00Z");
/** A fixed host key: proposals and executions are signed in every runtime test. */
export const HOST_KEY = new Uint8Array(32).fill(7);

export type Payload = Record<string, unknown>;

export function turn(type: string, payload: unknown): Payload {
  return {
    kind: "message",
    summary: type,
    tool_calls: [],
    message: { type, payload_json: JSON.stringify(payload), paper_ref: null },
  };
}

/** The demo's scripted answers of a role, as turn objects. */
export function demoTurns(role: "implementer" | "reviewer" | "summarizer"): Payload[] {
  const file = path.join(repoRoot, "examples/fix-failing-test/scripted", `${role}.jsonl`);
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Payload);
}

/** A named plan from test/fixtures/runtime/plans.json. */
export function plan(name: string): unknown {
  const plans = JSON.parse(readFileSync(path.join(fixtures, "plans.json"), "utf8")) as Record<
    string,
    unknown
  >;
  if (!(name in plans)) throw new Error(`no plan ${name}`);
  return plans[name];
}

export const accept = turn("Verdict", { decision: "accept", findings: [] });
export const reject = turn("Verdict", {
  decision: "reject",
  findings: [{ severity: "high", claim: "special-cases the tests", evidence: [] }],
});
export const result = turn("Result", { summary: "done", outcome: "verified", evidence: [] });

/**
 * Where a store's environments are made: one folder per store (a restarted host over the same
 * store shares it), so concurrent tests whose runs share a name never meet. Removed with the test.
 */
const envRoots = new WeakMap<LedgerStore, string>();
function envRootOf(store: LedgerStore): string {
  let root = envRoots.get(store);
  if (root === undefined) {
    const made = mkdtempSync(path.join(tmpdir(), "warrant-rt-"));
    // Contained commands may run as another uid: it must reach its environment's directory.
    chmodSync(made, 0o711);
    onTestFinished(() => rmSync(made, { recursive: true, force: true }));
    envRoots.set(store, made);
    root = made;
  }
  return root;
}

export interface Harness {
  readonly ctx: RuntimeContext;
  /** The folder this host's environments are made in (`warrant-env-<name>` each). */
  readonly envRoot: string;
  readonly store: MemoryLedgerStore;
  readonly ledger: LoopLedger;
  readonly pack: LoadedPack;
  readonly query: string;
  readonly events: RuntimeEvent[];
  /** Every scripted model made, per role, in order: their requests show the evidence given. */
  readonly models: Record<string, ScriptedModel[]>;
  advance(ms: number): void;
  drive(): Promise<DriveResult>;
}

export interface HarnessOptions {
  readonly pack?: string;
  readonly autoApprove?: boolean;
  /** Reuse a store (and its loop `query:test-1`, when open): a restarted host over the same ledger. */
  readonly store?: MemoryLedgerStore;
  /** What the runtime writes through (a store that fails at a chosen write, for crash tests). */
  readonly wrapStore?: (store: LedgerStore) => LedgerStore;
  /** `none`: no backend can contain a run (as on a host without bwrap or unshare). */
  readonly sandbox?: "bwrap" | "none";
  readonly onEvent?: (event: RuntimeEvent, h: Harness) => void | Promise<void>;
  /** The passages' tools (default: workspace reads of the pack's baseline). */
  readonly tools?: ToolsForPassage;
  /**
   * Passages also get the pack's observation command profiles (`profile.<name>`), run in this
   * harness's sandbox (`createPassageTools`); ignored when `tools` is given.
   */
  readonly profileTools?: boolean;
}

export async function harness(
  scripts: Partial<Record<Role, readonly Payload[]>>,
  opts: HarnessOptions = {},
): Promise<Harness> {
  const loaded = await loadTaskPack(path.join(fixtures, opts.pack ?? "task-pack.json"));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const pack = loaded.value;
  const store = opts.store ?? new MemoryLedgerStore();
  const through = opts.wrapStore === undefined ? store : opts.wrapStore(store);
  const envRoot = envRootOf(store);
  const ledger = new LoopLedger(through);
  let t = START;
  const clock = { now: () => new Date(t) };
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.min(ms, 10)));
  const events: RuntimeEvent[] = [];
  const models: Record<string, ScriptedModel[]> = {};
  const pending: Promise<unknown>[] = [];
  let h: Harness | undefined;
  const emit = (e: RuntimeEvent) => {
    events.push(e);
    if (opts.onEvent !== undefined && h !== undefined)
      pending.push(Promise.resolve(opts.onEvent(e, h)));
  };
  const operator = "node-operator-binding:test";
  // Hooks run before the runtime next reads the loop, so an act a hook takes is seen at once.
  const loop = {
    execute: ledger.execute.bind(ledger),
    document: async (q: string, now: Date) => {
      await Promise.all(pending.splice(0));
      return ledger.document(q, now);
    },
  };
  const sandbox = opts.sandbox === "none" ? undefined : createBwrapSandbox({ tempRoot: envRoot });
  const tools: ToolsForPassage =
    opts.tools ??
    (opts.profileTools === true
      ? createPassageTools({ workspace: (root) => createWorkspaceTools({ root }), sandbox })
          .toolsFor
      : async (request) => ok(createWorkspaceTools({ root: request.pack.baselineDir })));
  const ctx: RuntimeContext = {
    store: through,
    loop,
    passages: createAgentPassages((role, prior) => {
      const m = createScriptedModel((scripts[role] ?? []).slice(prior), {
        id: `scripted:${role}`,
      });
      models[role] = [...(models[role] ?? []), m];
      return m;
    }, tools),
    sandbox: sandboxPort(sandbox),
    approver: createApprover({
      store: through,
      loop: ledger,
      clock,
      sleep: async (ms) => {
        await Promise.all(pending.splice(0));
        await sleep(ms);
      },
      emit,
      operator,
      autoApprove: opts.autoApprove ?? true,
      pollMs: 5,
    }),
    clock,
    sleep,
    emit,
    operator,
    hostKey: HOST_KEY,
  };
  const reopened = (await store.readFacts("query:test-1")).length > 0;
  const query = reopened ? "query:test-1" : await startLoop(ctx, pack, {}, "query:test-1");
  h = {
    ctx,
    envRoot,
    store,
    ledger,
    pack,
    query,
    events,
    models,
    advance: (ms) => {
      t += ms;
    },
    drive: async () => {
      const r = await drive(ctx, { query, pack });
      await Promise.all(pending.splice(0));
      return r;
    },
  };
  return h;
}

export function steps(h: Harness): Promise<string[]> {
  return h.store.readFacts(h.query).then((fs) => fs.map((f) => f.fact.step.kind));
}

export async function conclusions(h: Harness) {
  return (await h.store.readFacts(h.query))
    .map((f) => f.fact.step)
    .filter((s) => s.kind === "concluded");
}

export async function recordsOf(h: Harness, kind: string) {
  return (await h.store.listRecords(h.query)).filter((r) => r.kind === kind);
}
