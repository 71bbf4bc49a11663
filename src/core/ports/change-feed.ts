// The change feed port: every loop's facts by position, and a signal when anything is stored, for
// live views (the console's event stream). Every LedgerStore of this package keeps one
// (`LedgerStore.changeFeed()`).
import type { Fact } from "../loop/types.js";

/** The version of the change feed port. */
export const CHANGE_FEED_PORT_VERSION = "v1";

/** A fact as the store's change feed gives it, with its position among the facts of every loop. */
export interface FeedFact {
  /**
   * Unique among the facts of every loop, and never given by `factsAfter` while a lower position
   * may still commit: a reader that has seen every fact up to a position misses none by asking for
   * those after it.
   */
  readonly position: number;
  readonly query: string;
  readonly fact: Fact;
}

/** What was stored by any writer of the store (any process), for live views of it. */
export interface ChangeFeed {
  /** Facts of every loop after `position`, in position order, at most `limit` of them. */
  factsAfter(position: number, limit: number): Promise<readonly FeedFact[]>;
  /** The greatest position `factsAfter` would give now (0 for none). */
  lastPosition(): Promise<number>;
  /**
   * Calls `onChange` soon after facts, records or operator acts were stored by anyone (calls
   * without a change are allowed); the returned function stops watching.
   */
  watch(onChange: () => void): Promise<() => Promise<void>>;
}
