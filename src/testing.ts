// `warrant/testing`: what tests of code built on Warrant need to run without a network, a database
// or a containment backend — a scripted model, a memory store, a fake sandbox, a clock the test
// advances — and the contract suites an implementation of a port runs (vitest's functions passed
// in: this module loads no test runner).
import {
  type ScriptedModel as CoreScriptedModel,
  createScriptedModel,
  parseScript,
  type ScriptedAnswer,
} from "./adapters/models/scripted-model.js";
import { MemoryLedgerStore } from "./adapters/store/memory-ledger-store.js";
import type { LedgerStore } from "./core/ports/ledger-store.js";
import type { ModelProvider } from "./core/ports/model-provider.js";

export type { ScriptedAnswer, ScriptedEntry } from "./adapters/models/scripted-model.js";
export { changeFeedContract } from "./testing/contracts/change-feed.js";
export { leaseContract } from "./testing/contracts/leases.js";
export { ledgerStoreContract } from "./testing/contracts/ledger-store.js";
export { memoryContract } from "./testing/contracts/memory.js";
export { sandboxContract } from "./testing/contracts/sandbox.js";
export type {
  ContractSubject,
  ContractTestApi,
  StoreFactory,
} from "./testing/contracts/test-api.js";
export {
  type FakeExecResult,
  type FakeSandbox,
  type FakeSandboxOptions,
  fakeSandbox,
} from "./testing/fake-sandbox.js";
export { MANUAL_CLOCK_START, type ManualClock, manualClock } from "./testing/manual-clock.js";

/** A model that replays fixed answers and records every request it is given. */
export interface ScriptedModel extends ModelProvider {
  /** Every request given so far, in order (including those that found the script exhausted). */
  readonly requests: CoreScriptedModel["requests"];
  /** Answers not yet given. */
  remaining(): number;
}

/**
 * A scripted model: each answer a turn object, raw text (to exercise repair), or
 * `{turn | text | stop: "refusal" | "truncated", usage?}`. Past its last answer it throws
 * `model/script-exhausted`, which blocks the loop (`model`).
 */
export function scriptedModel(
  answers: readonly ScriptedAnswer[],
  options: { readonly id?: string } = {},
): ScriptedModel {
  return createScriptedModel(answers, options);
}

/** A script's answers from JSONL text (one answer per non-blank line); throws `model/script`. */
export function parseModelScript(text: string): ScriptedAnswer[] {
  return parseScript(text);
}

/** A ledger in memory: nothing outlives the process. */
export function memoryStore(): LedgerStore {
  return new MemoryLedgerStore();
}
