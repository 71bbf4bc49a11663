// A loop's token accounting, read from its passage transcripts: the providers' own counts summed per
// role and over the loop. A count a transcript lacks (one written before that field existed, a
// provider that reports none) is 0; nothing is estimated.

import { ROLES, type Role } from "../core/loop/types.js";
import type { LedgerRecord } from "../core/ports/ledger-store.js";
import { tokenCount } from "../core/ports/model-provider.js";

/** Model calls and the providers' token counts over some passages. */
export interface TokenUsage {
  readonly modelCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** The part of `inputTokens` served from a prompt cache. */
  readonly cachedInputTokens: number;
  /** The part of `outputTokens` spent on hidden reasoning. */
  readonly reasoningTokens: number;
}

/** A loop's usage: its totals, and per role (only the roles that ran a passage). */
export interface LoopUsage extends TokenUsage {
  readonly byRole: Readonly<Partial<Record<Role, TokenUsage>>>;
}

const NONE: TokenUsage = {
  modelCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  reasoningTokens: 0,
};

function add(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    modelCalls: a.modelCalls + b.modelCalls,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
  };
}

/** One transcript's totals, each count read as a provider's report is (not a count: 0). */
function transcriptUsage(body: unknown): { role: unknown; usage: TokenUsage } {
  const b = (typeof body === "object" && body !== null ? body : {}) as {
    role?: unknown;
    usage?: Record<string, unknown>;
  };
  const u = typeof b.usage === "object" && b.usage !== null ? b.usage : {};
  return {
    role: b.role,
    usage: {
      modelCalls: tokenCount(u.modelCalls),
      inputTokens: tokenCount(u.inputTokens),
      outputTokens: tokenCount(u.outputTokens),
      cachedInputTokens: tokenCount(u.cachedInputTokens),
      reasoningTokens: tokenCount(u.reasoningTokens),
    },
  };
}

/** The usage of the passages whose transcripts are among `records` (other records are ignored). */
export function loopUsage(records: readonly LedgerRecord[]): LoopUsage {
  let total = NONE;
  const byRole: Partial<Record<Role, TokenUsage>> = {};
  for (const r of records) {
    if (r.kind !== "transcript") continue;
    const { role, usage } = transcriptUsage(r.body);
    total = add(total, usage);
    if ((ROLES as readonly unknown[]).includes(role)) {
      const key = role as Role;
      byRole[key] = add(byRole[key] ?? NONE, usage);
    }
  }
  return { ...total, byRole };
}
