// A run named by a prefix of its ref, as an operator types it: `approve 3fJk9aQz fix-slugify`. Any
// unique prefix of at least 8 characters of the ref's digest names the run, with or without the
// `corpus-experiment:sha256:` in front; a full ref is taken as it is.
import { parseRunRef } from "../core/ids.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import { PROPOSAL_PREFIX } from "../core/records/proposal.js";

/** The fewest characters of a run ref's digest that may name it. */
export const MIN_RUN_PREFIX = 8;

export type RunRefResolution =
  | { readonly ok: true; readonly ref: string }
  | {
      readonly ok: false;
      /**
       * `hil/ref-too-short` or `hil/ref-invalid` (usage), `hil/ambiguous-ref` (usage: more than one
       * run has that prefix, listed in `candidates`), or `loop/run-missing` (no run has it).
       */
      readonly code:
        | "hil/ref-too-short"
        | "hil/ref-invalid"
        | "hil/ambiguous-ref"
        | "loop/run-missing";
      readonly message: string;
      readonly candidates?: readonly string[];
      /** Whether the caller's input is at fault (exit 2) rather than the store's content (1). */
      readonly usage: boolean;
    };

const HEAD = `${PROPOSAL_PREFIX}:sha256:`;

/** The run `text` names in `store`: itself when a full ref, else the one run its prefix matches. */
export async function resolveRunRef(store: LedgerStore, text: string): Promise<RunRefResolution> {
  if (parseRunRef(text).ok) return { ok: true, ref: text };
  const digest = text.startsWith(HEAD)
    ? text.slice(HEAD.length)
    : HEAD.startsWith(text)
      ? ""
      : text;
  if (!/^[A-Za-z0-9_-]*$/.test(digest))
    return {
      ok: false,
      code: "hil/ref-invalid",
      message: `${JSON.stringify(text)} is not a run ref or a prefix of one (${HEAD}<43 base64url characters>)`,
      usage: true,
    };
  if (digest.length < MIN_RUN_PREFIX)
    return {
      ok: false,
      code: "hil/ref-too-short",
      message: `${JSON.stringify(text)} is too short to name a run: give at least ${MIN_RUN_PREFIX} characters of its digest`,
      usage: true,
    };
  const prefix = `${HEAD}${digest}`;
  const matches = new Set<string>();
  for (const loop of await store.listLoops())
    for (const r of await store.listRecords(loop.query))
      if (r.kind === "proposal" && r.ref.startsWith(prefix)) matches.add(r.ref);
  const [only, ...more] = [...matches].sort();
  if (only === undefined)
    return {
      ok: false,
      code: "loop/run-missing",
      message: `no run ${text} in ${store.uri}`,
      usage: false,
    };
  if (more.length > 0)
    return {
      ok: false,
      code: "hil/ambiguous-ref",
      message: `${text} names ${more.length + 1} runs; give more of the ref: ${[only, ...more].join(", ")}`,
      candidates: [only, ...more],
      usage: true,
    };
  return { ok: true, ref: only };
}
