// The drive's own events as spans: a drive's start and end (its root `invoke_workflow` span, linked
// to earlier drives' traces), the facts it appends (span events on the innermost open span), and
// what stops or blocks it (events and attributes on the root).
import { context, SpanKind, trace } from "@opentelemetry/api";
import { EVENT, GEN_AI, GENERAL, OPERATION, SPAN, WARRANT } from "./names.js";
import { type EventHandlers, fail, innermost, linkOf } from "./tracing-state.js";

/** The drive family of events. */
export type DriveEventKind =
  | "drive-start"
  | "drive-end"
  | "fact"
  | "blocked"
  | "lease-lost"
  | "stop"
  | "summary-skipped";

export const driveHandlers: EventHandlers<DriveEventKind> = {
  "drive-start": (e, d, t) => {
    if (d !== undefined) t.endDrive(e.query, d, true);
    const links = (e.earlierTraces ?? []).flatMap((parent) => linkOf(parent) ?? []);
    const parent = t.cellParents.get(e.query) ?? context.active();
    const root = t.tracer.startSpan(
      SPAN.workflow(e.pack),
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [GEN_AI.operationName]: OPERATION.workflow,
          [GEN_AI.workflowName]: e.pack,
          [WARRANT.query]: e.query,
          [WARRANT.binding]: e.binding,
          [WARRANT.store]: e.store,
          [WARRANT.holder]: e.holder,
        },
        links,
      },
      parent,
    );
    t.drives.set(e.query, {
      root,
      ctx: trace.setSpan(parent, root),
      passage: undefined,
      run: undefined,
      stopCounted: false,
    });
  },
  "drive-end": (e, d, t) => {
    if (d === undefined) return;
    d.root.setAttribute(WARRANT.driveStatus, e.status);
    if (e.stop !== undefined) d.root.setAttribute(WARRANT.stopReason, e.stop);
    if (e.blocked !== undefined) d.root.setAttribute(WARRANT.blockedReason, e.blocked);
    if (e.error !== undefined) fail(d.root, e.error);
    t.endDrive(e.query, d, e.status === "failed");
  },
  fact: (e, d, t) => {
    if (d === undefined) return;
    innermost(d).addEvent(EVENT.fact, {
      [WARRANT.factKind]: e.step.kind,
      [WARRANT.factSequence]: e.sequence,
    });
    t.metrics?.factAppended(e.step);
  },
  blocked: (e, d, t) => {
    d?.root.addEvent(e.reason === "budget" ? EVENT.budgetRefused : EVENT.blocked, {
      [WARRANT.blockedReason]: e.reason,
      ...(e.counter === undefined ? {} : { [WARRANT.budgetCounter]: e.counter }),
      // The detail can quote the model (an operator question): content, only when captured.
      ...(t.capture ? { [WARRANT.blockedDetail]: e.detail } : {}),
    });
  },
  "lease-lost": (e, d, _t) => {
    d?.root.addEvent(EVENT.leaseLost, { [GENERAL.errorType]: e.code });
  },
  stop: (e, d, t) => {
    // Counted once per drive that finds its loop stopped; a stopped loop that is only looked
    // at again (no drive) is not a new stop.
    if (d === undefined || d.stopCounted) return;
    d.stopCounted = true;
    d.root.setAttribute(WARRANT.stopReason, e.reason);
    t.metrics?.loopStopped(e.reason);
  },
  "summary-skipped": (e, d, _t) => {
    d?.root.addEvent(EVENT.summarySkipped, {
      [WARRANT.proposalRef]: e.proposalRef,
      [WARRANT.detail]: e.detail,
    });
  },
};
