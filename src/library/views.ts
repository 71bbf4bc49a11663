// What a console (or any reader) shows of a store, as one facet of the runtime (`warrant.views`):
// each loop's status and what it waits for, its records, its conclusion, the approval card's
// context, the verified change, a record as `warrant record` shows it, the pending approvals and the
// store's change feed. A reader built on it never touches the store itself.
import type { ChangeFeed } from "../core/ports/change-feed.js";
import type { LedgerRecord, LedgerStore } from "../core/ports/ledger-store.js";
import { stepFailureReason } from "../runtime/output-tail.js";
import {
  type ApprovalContext,
  approvalContext,
  type LoopConclusion,
  loopConclusion,
} from "./approval-context.js";
import { type ChangeJson, type ChangeOptions, loopChange } from "./changes.js";
import { changesetDiff } from "./changeset-diff.js";
import {
  type LoopStatus,
  listPending,
  loopStatus,
  type PendingApproval,
  packPolicyReader,
} from "./pending.js";
import { type RecordView, readRecordView } from "./record-view.js";

/** A record as `warrant record --json` gives it, and a changeset's diff. */
export interface RecordDisplay extends RecordView {
  /** A complete changeset's change as a git diff. */
  readonly diff?: string;
  /**
   * For a run report, or an execution with its report: why each failed step failed, by step id,
   * when it is more than a command's exit status (`stepFailureReason`).
   */
  readonly stepReasons?: Readonly<Record<string, string>>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const textOf = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Why each failed step of a run report's body failed, by step id (steps with no reason left out). */
export function stepReasonsOf(report: unknown): Record<string, string> {
  const reasons: Record<string, string> = {};
  const steps = isObject(report) && Array.isArray(report.steps) ? report.steps : [];
  for (const s of steps) {
    if (!isObject(s) || typeof s["step/id"] !== "string") continue;
    const findings = (Array.isArray(s.findings) ? s.findings : [])
      .filter(isObject)
      .map((f) => ({ code: String(f.code ?? ""), message: String(f.message ?? "") }));
    const reason = stepFailureReason({
      status: textOf(s.status) ?? "",
      action: textOf(s.action) ?? "",
      refusal: textOf(s.refusal),
      excerpt: textOf(s.excerpt),
      findings,
    });
    if (reason !== undefined) reasons[s["step/id"]] = reason;
  }
  return reasons;
}

export interface WarrantViews {
  /** The store's URI, without a password: for messages. */
  readonly storeUri: string;
  /** A loop's status at `now` (default: the runtime's clock); undefined when there is no such loop. */
  status(query: string, now?: Date): Promise<LoopStatus | undefined>;
  /** Every loop's status at `now`, in the store's order, each with its query. */
  statuses(now?: Date): Promise<(LoopStatus & { readonly query: string })[]>;
  /** A loop's records, in the order they were written. */
  records(query: string): Promise<readonly LedgerRecord[]>;
  /** The summarizer's last Result and every approval or denial with its operator. */
  conclusion(query: string): Promise<LoopConclusion>;
  /** What an approver decides with (the approval card); undefined when there is no such loop. */
  approvalContext(query: string, run?: string, now?: Date): Promise<ApprovalContext | undefined>;
  /** The change a verified run made, as `loopChange` gives it (its refusals are WarrantErrors). */
  change(query: string, options?: ChangeOptions): Promise<ChangeJson>;
  /** A record as `warrant record` shows it (a changeset with its diff); undefined when absent. */
  recordView(ref: string): Promise<RecordDisplay | undefined>;
  /** A record's stored body; undefined when the store holds no such record. */
  recordBody(ref: string): Promise<unknown | undefined>;
  /** Every approval waited for at `now`. */
  pending(now?: Date): Promise<PendingApproval[]>;
  /** The store's change feed, for a live view; undefined where the store keeps none. */
  watch(): ChangeFeed | undefined;
}

export function storeViews(store: LedgerStore, clock: { now(): Date }): WarrantViews {
  return {
    storeUri: store.uri,
    status: (query, now = clock.now()) => loopStatus(store, query, now),
    async statuses(now = clock.now()) {
      const policies = packPolicyReader();
      const out: (LoopStatus & { readonly query: string })[] = [];
      for (const l of await store.listLoops()) {
        const s = await loopStatus(store, l.query, now, policies);
        if (s !== undefined) out.push({ ...s, query: l.query });
      }
      return out;
    },
    records: (query) => store.listRecords(query),
    conclusion: (query) => loopConclusion(store, query),
    approvalContext: (query, run, now = clock.now()) => approvalContext(store, query, now, run),
    change: (query, options = {}) => loopChange(store, query, options),
    async recordView(ref) {
      const view = await readRecordView(store, ref);
      if (view === undefined) return undefined;
      if (view.kind === "runReport") return { ...view, stepReasons: stepReasonsOf(view.body) };
      if (view.kind === "execution")
        return view.report === undefined
          ? view
          : { ...view, stepReasons: stepReasonsOf(view.report.body) };
      const diff =
        view.kind === "changeset"
          ? changesetDiff(view.body as Parameters<typeof changesetDiff>[0])
          : undefined;
      return diff === undefined ? view : { ...view, diff };
    },
    async recordBody(ref) {
      return (await store.readRecord(ref))?.body;
    },
    pending: (now = clock.now()) => listPending(store, now),
    watch: () => store.changeFeed?.(),
  };
}
