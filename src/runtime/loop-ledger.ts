// Drives the loop decider over a LedgerStore: read → fold → decide → append with the expected last
// sequence; on a conflict re-read and re-decide, so two writers never overspend or fork a loop. A
// loop this ledger has read is decided on its cached state first (no read per command): the
// expected sequence refuses that append if the loop moved on, and a refusal is decided again.
import { decide } from "../core/loop/decide.js";
import { project } from "../core/loop/project.js";
import { evolve, fold, type LoopState } from "../core/loop/state.js";
import type { Decision, LoopCommand, LoopDocument } from "../core/loop/types.js";
import type { LedgerRecord, LedgerStore } from "../core/ports/ledger-store.js";
import type { Random } from "../core/ports/random.js";
import type { Sleep } from "../core/ports/time.js";
import { WarrantError } from "../core/result.js";
import { systemRandom } from "./system-random.js";
import { systemSleep } from "./system-time.js";

/** Appends lost to other writers before giving up: each loss means another fact was appended. */
export const MAX_APPEND_ATTEMPTS = 64;

/**
 * After a lost append, wait a random time that grows with the losses (capped), so that writers
 * racing for one loop spread out instead of colliding again at once.
 */
function backoff(losses: number, sleep: Sleep, random: Random): Promise<void> {
  if (losses < 2) return Promise.resolve();
  return sleep(random() * Math.min(100, 2 ** losses));
}

export class LoopLedger {
  readonly #store: LedgerStore;
  readonly #sleep: Sleep;
  readonly #random: Random;
  /**
   * Per query, the folded state of the facts read so far. It only ever grows by evolve over facts
   * read from the store in sequence order after its lastSequence, so it equals fold(all facts read).
   */
  readonly #cache = new Map<string, LoopState>();

  /**
   * `sleep`: how a writer that lost an append waits before it re-reads (the process's time);
   * `random`: what spreads those waits.
   */
  constructor(store: LedgerStore, sleep: Sleep = systemSleep, random: Random = systemRandom) {
    this.#store = store;
    this.#sleep = sleep;
    this.#random = random;
  }

  /** The current state of a loop: the cached fold brought up to date with the store. */
  async state(query: string): Promise<LoopState> {
    const cached = this.#cache.get(query);
    const after = cached?.lastSequence ?? 0;
    const stored = await this.#store.readFacts(query, after);
    const facts = stored.map((s) => s.fact);
    for (const [i, fact] of facts.entries()) {
      if (fact.sequence !== after + i + 1) {
        this.#cache.delete(query);
        throw new WarrantError(
          "store/sequence-gap",
          `loop ${query}: fact ${fact.sequence} follows ${after + i}`,
        );
      }
    }
    const state = cached === undefined ? fold(facts) : fold(facts, cached);
    this.#cache.set(query, state);
    return state;
  }

  /**
   * Decide `command` at `now` and append its fact (with `records`, in the same transaction). Records
   * are not stored when the command is refused or replayed.
   */
  async execute(
    query: string,
    command: LoopCommand,
    now: Date,
    records?: readonly LedgerRecord[],
  ): Promise<Decision> {
    if (command.op === "open" && command.query !== query) {
      throw new WarrantError(
        "loop/query-mismatch",
        `open names ${command.query}, executed for ${query}`,
      );
    }
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      // The first try decides on the state this ledger last saw, without reading the store: its
      // append names that state's last sequence, so it is refused if the loop moved on meanwhile.
      // Only a decision to append is taken from it; a refusal or a replay is decided again on what
      // the store holds now.
      const cached = attempt === 0 ? this.#cache.get(query) : undefined;
      let state = cached ?? (await this.state(query));
      let decision = decide(state, command, now);
      if (decision.result !== "appended" && cached !== undefined) {
        state = await this.state(query);
        decision = decide(state, command, now);
      }
      if (decision.result !== "appended") return decision;
      const outcome = await this.#store.append({
        query,
        expectedLastSequence: state.lastSequence,
        facts: [decision.fact],
        ...(records === undefined || records.length === 0 ? {} : { records }),
      });
      if (outcome.ok) {
        this.#cache.set(query, evolve(state, decision.fact));
        return decision;
      }
      // A sequence conflict: another writer appended first. A charge-key conflict: the same charge
      // landed meanwhile. Either way the re-read finds what happened and the re-decision sees it. A
      // try on the state last seen lost to nothing in flight: it re-reads at once.
      if (cached === undefined) await backoff(attempt + 1, this.#sleep, this.#random);
    }
    throw new WarrantError(
      "store/contention",
      `loop ${query}: ${MAX_APPEND_ATTEMPTS} appends in a row lost to other writers`,
    );
  }

  /** The loop document as of `now`, or undefined when the loop has no fact. */
  async document(query: string, now: Date): Promise<LoopDocument | undefined> {
    return project(await this.state(query), now);
  }
}
