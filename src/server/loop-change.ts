// The change a loop's verified run made, for `GET /api/loops/:query/diff`: read from the patch steps
// of the run's plan. The library's `loopChange` (the one `warrant diff` prints, from the run's
// recorded environment) takes this name's place where it exists.
import type { LedgerStore } from "../core/loop/ledger-store.js";
import { readLedger } from "../runtime/ledger-view.js";

export interface LoopChangeFile {
  readonly path: string;
  readonly status: "modified" | "added";
}

export type LoopChange =
  | {
      readonly ok: true;
      readonly value: {
        readonly query: string;
        readonly run: string;
        readonly files: readonly LoopChangeFile[];
        readonly diff: string;
      };
    }
  | { readonly ok: false; readonly code: string; readonly message: string };

interface PatchStep {
  readonly action?: unknown;
  readonly path?: unknown;
  readonly diff?: unknown;
  readonly content?: unknown;
}

/** The change of RUN (default: the loop's last verified run), as a git-style diff of its patches. */
export async function loopChange(
  store: LedgerStore,
  query: string,
  options: { readonly run?: string } = {},
): Promise<LoopChange> {
  const [facts, records, acts] = await Promise.all([
    store.readFacts(query),
    store.listRecords(query),
    store.readOperatorActs(query),
  ]);
  if (facts.length === 0)
    return { ok: false, code: "loop/not-opened", message: `no loop ${query} in ${store.uri}` };
  const view = readLedger(
    facts.map((f) => f.fact),
    records,
    acts,
  );
  const cycle =
    options.run === undefined
      ? view.cycles.filter((c) => c.concluded?.outcome === "verified").at(-1)
      : view.cycles.find((c) => c.proposalRef === options.run);
  if (cycle === undefined)
    return {
      ok: false,
      code: options.run === undefined ? "apply/not-verified" : "loop/run-missing",
      message:
        options.run === undefined
          ? `${query} has no verified run`
          : `${query} has no run ${options.run}`,
    };
  if (cycle.concluded?.outcome !== "verified")
    return {
      ok: false,
      code: "apply/not-verified",
      message: `the run of ${cycle.proposalRef} was not verified`,
    };
  const steps = (cycle.proposal?.candidate as { steps?: PatchStep[] } | undefined)?.steps ?? [];
  const files: LoopChangeFile[] = [];
  const parts: string[] = [];
  for (const s of steps) {
    if (s.action !== "patch" || typeof s.path !== "string") continue;
    if (typeof s.diff === "string") {
      files.push({ path: s.path, status: "modified" });
      const body = s.diff.startsWith("---")
        ? s.diff
        : `--- a/${s.path}\n+++ b/${s.path}\n${s.diff}`;
      parts.push(`diff --git a/${s.path} b/${s.path}\n${body.endsWith("\n") ? body : `${body}\n`}`);
    } else if (typeof s.content === "string") {
      files.push({ path: s.path, status: "added" });
      const lines = s.content.split("\n");
      if (lines.at(-1) === "") lines.pop();
      parts.push(
        `diff --git a/${s.path} b/${s.path}\n--- a/${s.path}\n+++ b/${s.path}\n` +
          `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}\n`).join("")}`,
      );
    }
  }
  return { ok: true, value: { query, run: cycle.proposalRef, files, diff: parts.join("") } };
}
