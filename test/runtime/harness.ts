// A runtime under test, built with createWarrant: a memory store, the real bwrap sandbox, scripted
// models per role, a clock the test moves, and every event captured (a hook may act on one: post a
// denial, cancel; the runtime's next read of the ledger waits for it).

import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { onTestFinished } from "vitest";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { type QueryId, toQueryId } from "../../src/core/ids.js";
import type { Role } from "../../src/core/loop/types.js";
import type { LedgerStore } from "../../src/core/ports/ledger-store.js";
import type { Sandbox } from "../../src/core/ports/sandbox.js";
import type { Clock } from "../../src/core/ports/time.js";
import type { LoopOutcome } from "../../src/index.js";
import { createWarrant, type Warrant } from "../../src/library/create-warrant.js";
import type { WarrantOptions } from "../../src/library/options.js";
import type { WarrantEvent } from "../../src/runtime/events.js";
import { LoopLedger } from "../../src/runtime/loop-ledger.js";
import { keySigner } from "../../src/runtime/records.js";
import type { LoadedPack } from "../../src/runtime/task-pack.js";
import { type ManualClock, type ScriptedModel, scriptedModel } from "../../src/testing.js";
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

/** The store's reads wait for the hooks still running, so an act a hook takes is seen at once. */
function afterHooks(store: LedgerStore, pending: Promise<unknown>[]): LedgerStore {
  const reads = new Set([
    "readFacts",
    "listRecords",
    "readRecord",
    "readOperatorActs",
    "listLoops",
  ]);
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== "function") return v;
      if (!reads.has(String(prop))) return v.bind(target);
      return async (...args: unknown[]) => {
        await Promise.all(pending.splice(0));
        return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
}

export interface Harness {
  readonly warrant: Warrant;
  readonly clock: Clock;
  /** The folder this host's environments are made in (`warrant-env-<name>` each). */
  readonly envRoot: string;
  readonly store: MemoryLedgerStore;
  readonly ledger: LoopLedger;
  readonly pack: LoadedPack;
  readonly query: QueryId;
  readonly events: WarrantEvent[];
  /** Every scripted model made, per role, in order: their requests show the evidence given. */
  readonly models: Record<string, ScriptedModel[]>;
  advance(ms: number): void;
  drive(): Promise<Exclude<LoopOutcome, { status: "leased-elsewhere" }>>;
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
  /** What the runtime sees of the bwrap sandbox (a host that dies cannot destroy what it made). */
  readonly wrapSandbox?: (sandbox: Sandbox) => Sandbox;
  readonly onEvent?: (event: WarrantEvent, h: Harness) => void | Promise<void>;
  /** How passages connect MCP servers (default: the official SDK's client). */
  readonly mcp?: WarrantOptions["mcp"];
  /** Passages also get the pack's observation command profiles (`profile.<name>`). */
  readonly profileTools?: boolean;
  readonly tools?: WarrantOptions["tools"];
  /** The drive's lease (default: a 60 s ttl and a random holder). */
  readonly lease?: WarrantOptions["lease"];
  /**
   * The process's time (leases, renewals, approval polls): a manual clock the test advances.
   * Default: the system's (the loop's clock is the harness's own either way).
   */
  readonly time?: ManualClock;
  /** OpenTelemetry (default off, whatever the environment of the test says). */
  readonly openTelemetry?: WarrantOptions["openTelemetry"];
  /** Roles that run on their agent definitions' models (no scripted override). */
  readonly definitionRoles?: readonly Role[];
  /** Where the runtime finds skills and which memory namespace it uses. */
  readonly skills?: WarrantOptions["skills"];
  readonly namespace?: string;
}

export async function harness(
  scripts: Partial<Record<Role, readonly Payload[]>>,
  opts: HarnessOptions = {},
): Promise<Harness> {
  const packFile = opts.pack ?? "task-pack.json";
  const loaded = await loadPack(
    path.isAbsolute(packFile) ? packFile : path.join(fixtures, packFile),
  );
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const pack = loaded.value;
  const store = opts.store ?? new MemoryLedgerStore();
  const pending: Promise<unknown>[] = [];
  const written = opts.wrapStore === undefined ? store : opts.wrapStore(store);
  const through = afterHooks(written, pending);
  const envRoot = envRootOf(store);
  let t = START;
  const clock: Clock = { now: () => new Date(t) };
  const events: WarrantEvent[] = [];
  const models: Record<string, ScriptedModel[]> = {};
  let h: Harness | undefined;
  const warrant = await createWarrant({
    store: through,
    clock,
    models: (role, { priorCalls, query }) => {
      if (opts.definitionRoles?.includes(role) === true) return undefined;
      const m = scriptedModel((scripts[role] ?? []).slice(priorCalls), { id: `scripted:${role}` });
      // Asked with no loop yet: which roles it overrides, for the binding (no passage runs on it).
      if (query !== "") models[role] = [...(models[role] ?? []), m];
      return m;
    },
    sandbox:
      opts.sandbox === "none"
        ? "none"
        : (opts.wrapSandbox ?? ((x) => x))(createBwrapSandbox({ tempRoot: envRoot })),
    approver: (opts.autoApprove ?? true) ? "auto" : "wait",
    signer: keySigner(HOST_KEY),
    operator: "node-operator-binding:test",
    profileTools: opts.profileTools === true,
    onEvent: (e) => {
      events.push(e);
      if (opts.onEvent !== undefined && h !== undefined)
        pending.push(Promise.resolve(opts.onEvent(e, h)));
    },
    pollIntervalMs: 5,
    lease: opts.lease ?? { ttlMs: 60_000 },
    ...(opts.time === undefined ? {} : { time: opts.time }),
    openTelemetry: opts.openTelemetry ?? false,
    ...(opts.mcp === undefined ? {} : { mcp: opts.mcp }),
    ...(opts.tools === undefined ? {} : { tools: opts.tools }),
    ...(opts.skills === undefined ? {} : { skills: opts.skills }),
    ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }),
  });
  const reopened = (await store.readFacts("query:test-1")).length > 0;
  const query = reopened
    ? toQueryId("query:test-1")
    : await warrant.open(pack, { query: "query:test-1", models: {} });
  h = {
    warrant,
    clock,
    envRoot,
    store,
    ledger: new LoopLedger(written),
    pack,
    query,
    events,
    models,
    advance: (ms) => {
      t += ms;
    },
    drive: async () => {
      const r = await warrant.resume(query, { waitMs: 0 }).result;
      await Promise.all(pending.splice(0));
      if (r.status === "leased-elsewhere") throw new Error(`${query} is leased elsewhere`);
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
