// The shapes the runtime's drives and reads take and give (`run`, `resume`, `show`), on their own so
// that what builds on the runtime (eval sets) can name them without importing the runtime itself.
import type { RecordRef } from "../core/ids.js";
import type { LoopDocument, Role } from "../core/loop/types.js";
import type { NetworkReport } from "../runtime/records.js";
import type { LoopUsage } from "./loop-usage.js";
import type { Waiting } from "./pending.js";

export interface RunOptions {
  /** The loop's query id (default `query:<pack>-<time>-<random>`). */
  readonly query?: string;
  /**
   * What the loop's binding records for each role's model (a model URI, say), read back on resume
   * as `ModelContext.recorded`. Default: each role's model id. Never a key.
   */
  readonly models?: Readonly<Partial<Record<Role, string>>>;
}

export interface ResumeOptions {
  /** How long to wait for a lease another driver holds (default: the lease's ttl and a second). */
  readonly waitMs?: number;
}

export interface LoopView {
  /** The seed-valid loop document. */
  readonly loop: LoopDocument;
  /** Each record's ref, as `record()` takes it, and kind. */
  readonly records: readonly { readonly ref: RecordRef; readonly kind: string }[];
  /** Model calls and tokens, summed from the passage transcripts, per role and in all. */
  readonly usage: LoopUsage;
  /** Each run of a pack with network: its report's egress record (absent when there is none). */
  readonly egress?: readonly RunEgress[];
  /**
   * What the open loop waits on, as `loops()` says it (a failed passage's code and message, its
   * model's last refused answer among them); absent once stopped or when nothing holds it.
   */
  readonly waiting?: Waiting;
}

export interface RunEgress {
  readonly "proposal/ref": string;
  readonly network: NetworkReport;
}
