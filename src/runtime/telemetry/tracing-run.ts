// A run's events as spans: its `warrant.run` span (made at its end for a run an earlier drive
// abandoned), each step's span, each check's span timed from the end of the one before, and its
// phases and approvals as span events.
import { SpanKind, trace } from "@opentelemetry/api";
import { EVENT, SPAN, WARRANT } from "./names.js";
import { type EventHandlers, endRun, fail, now, runOf } from "./tracing-state.js";

/** The run family of events. */
export type RunEventKind =
  | "run-start"
  | "run-phase"
  | "step-start"
  | "step-end"
  | "check"
  | "run-end"
  | "approval-requested"
  | "approval-answered";

export const runHandlers: EventHandlers<RunEventKind> = {
  "run-start": (e, d, t) => {
    if (d === undefined) return;
    if (d.run !== undefined) endRun(d.run, true);
    const span = t.child(d.ctx, SPAN.run(e.proposalRef), {
      [WARRANT.proposalRef]: e.proposalRef,
      [WARRANT.environmentRef]: e.environmentRef,
      [WARRANT.sandboxBackend]: e.backend,
    });
    d.run = {
      span,
      ctx: trace.setSpan(d.ctx, span),
      proposalRef: e.proposalRef,
      step: undefined,
    };
  },
  "run-phase": (e, d, _t) => {
    (runOf(d, e.proposalRef)?.span ?? d?.root)?.addEvent(EVENT.phase, {
      [WARRANT.phase]: e.phase,
      [WARRANT.durationMs]: e.durationMs,
    });
  },
  "step-start": (e, d, t) => {
    const r = runOf(d, e.proposalRef);
    if (r === undefined) return;
    r.step?.end();
    r.step = t.child(r.ctx, SPAN.step(e.stepId), {
      [WARRANT.stepId]: e.stepId,
      [WARRANT.stepIndex]: e.index,
      [WARRANT.stepClass]: e.class,
      [WARRANT.stepAction]: e.action,
    });
  },
  "step-end": (e, d, _t) => {
    const r = runOf(d, e.proposalRef);
    const span = r?.step;
    if (r === undefined || span === undefined) return;
    span.setAttribute(WARRANT.stepStatus, e.status);
    if (e.exitCode !== undefined && e.exitCode !== null)
      span.setAttribute(WARRANT.exitCode, e.exitCode);
    if (e.truncated !== undefined) span.setAttribute(WARRANT.truncated, e.truncated);
    if (e.timedOut !== undefined) span.setAttribute(WARRANT.timedOut, e.timedOut);
    if (e.refusal !== undefined) span.setAttribute(WARRANT.refusal, e.refusal);
    if (e.status !== "ok") fail(span, e.refusal ?? `step_${e.status}`);
    r.step = undefined;
    span.end();
  },
  check: (e, d, t) => {
    const r = runOf(d, e.proposalRef);
    if (r === undefined) return;
    const start = r.checkEnd ?? now() - e.durationMs;
    const end = start + e.durationMs;
    r.checkEnd = end;
    const span = t.child(
      r.ctx,
      SPAN.check(e.name),
      {
        [WARRANT.checkName]: e.name,
        [WARRANT.checkPassed]: e.passed,
        [WARRANT.checkDetail]: e.detail,
      },
      SpanKind.INTERNAL,
      start,
    );
    if (!e.passed) fail(span, "check_failed", e.detail);
    span.end(end);
  },
  "run-end": (e, d, t) => {
    if (d === undefined) return;
    // A run abandoned by an earlier drive is concluded by this one without starting again.
    const r =
      runOf(d, e.proposalRef) ??
      (() => {
        const span = t.child(d.ctx, SPAN.run(e.proposalRef), {
          [WARRANT.proposalRef]: e.proposalRef,
          [WARRANT.environmentRef]: e.environmentRef,
        });
        const ctx = trace.setSpan(d.ctx, span);
        return { span, ctx, proposalRef: e.proposalRef, step: undefined };
      })();
    r.span.setAttributes({
      [WARRANT.runOutcome]: e.outcome,
      [WARRANT.environmentMade]: e.environmentMade,
      [WARRANT.environmentDestroyed]: e.environmentDestroyed,
      [WARRANT.runInterrupted]: e.interrupted,
    });
    if (e.refusal !== undefined) r.span.setAttribute(WARRANT.runRefusal, e.refusal);
    if (d.run === r) d.run = undefined;
    endRun(r, false);
  },
  "approval-requested": (e, d, t) => {
    (runOf(d, e.proposalRef)?.span ?? d?.root)?.addEvent(EVENT.approvalRequested, {
      [WARRANT.approvalStep]: e.step,
      [WARRANT.approvalKind]: e.approval,
      [WARRANT.proposalRef]: e.proposalRef,
      ...(t.capture ? { [WARRANT.approvalDescription]: e.description } : {}),
    });
  },
  "approval-answered": (e, d, _t) => {
    (runOf(d, e.proposalRef)?.span ?? d?.root)?.addEvent(EVENT.approvalAnswered, {
      [WARRANT.approvalStep]: e.step,
      [WARRANT.approvalKind]: e.approval,
      [WARRANT.proposalRef]: e.proposalRef,
      [WARRANT.approvalAnswer]: e.answer,
      [WARRANT.approvalBy]: e.by,
    });
  },
};
