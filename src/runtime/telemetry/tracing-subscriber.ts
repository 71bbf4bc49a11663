// Tracing as a subscriber of the event stream: paired events become spans (a drive's root
// `invoke_workflow`, its `invoke_agent` passages with their `chat` and `execute_tool` calls, its
// `warrant.run`s with their steps and checks), single events become span events, and the metrics
// are fed on the way. It only reads events; it never reaches back into the drive. Only the
// OpenTelemetry API is used here: the SDK behind the providers is the composition's choice.
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  type MeterProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TimeInput,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import type { Role } from "../../core/loop/types.js";
import type { ToolKind, WarrantEvent } from "../events.js";
import {
  type CallAttributes,
  callAttributes,
  createDriveMetrics,
  type DriveMetrics,
} from "./drive-metrics.js";
import { inputMessages, outputMessages, systemInstructions } from "./genai-content.js";
import {
  EVENT,
  GEN_AI,
  GENERAL,
  OPERATION,
  SCHEMA_URL,
  SCOPE_NAME,
  SPAN,
  WARRANT,
} from "./names.js";

export interface TracingOptions {
  readonly tracerProvider: TracerProvider;
  /** Where the metrics go; none are recorded without one. */
  readonly meterProvider?: MeterProvider;
  /** Record prompts, answers, tool arguments and results, and approval diffs (default false). */
  readonly captureContent?: boolean;
}

/** An eval's span (`warrant.eval`): each cell a span under it, each cell's drives under the cell. */
export interface EvalSpan {
  /** Starts the span of a cell whose loop is `query`: a drive of that loop is its child. */
  cell(
    query: string,
    attributes: Attributes,
  ): { end(attributes: Attributes, error?: string): void };
  end(attributes: Attributes, error?: string): void;
}

export interface TracingSubscriber {
  /** The subscriber: turns each event into span starts, ends, attributes and events. */
  readonly observe: (event: WarrantEvent) => void;
  /** Starts an eval's span. */
  evalSpan(attributes: Attributes): EvalSpan;
  /** The W3C `traceparent` of the root span of the drive of `query` now traced, if any. */
  traceparent(query: string): string | undefined;
  /** Ends every open span as interrupted (the process is stopping mid-drive). */
  interrupt(): void;
}

interface ChatSpan {
  readonly span: Span;
  /** The call ended with an invalid turn: the span stays open for the repair that follows. */
  awaitsRepair: boolean;
}

interface PassageSpans {
  readonly ref: string;
  readonly span: Span;
  readonly ctx: Context;
  readonly role: Role;
  /** The chat spans' attributes and the metrics', made at its first call (one provider a passage). */
  calls?: PassageCalls;
  chat: ChatSpan | undefined;
  tool: Span | undefined;
}

interface PassageCalls {
  readonly providerId: string;
  /** `chat {model}`. */
  readonly name: string;
  readonly span: Attributes;
  readonly base: Attributes;
  /** The metrics' attributes, by the model that answered ("" when none was named). */
  readonly metrics: Map<string, CallAttributes>;
}

interface RunSpans {
  readonly span: Span;
  readonly ctx: Context;
  readonly proposalRef: string;
  step: Span | undefined;
  /**
   * Where the last check span ended. The checks run one after another, each timed from the end of
   * the one before, so a check's span starts there: spans stay in the order the checks ran however
   * late each event is handled.
   */
  checkEnd?: number;
}

interface DriveSpans {
  readonly root: Span;
  readonly ctx: Context;
  passage: PassageSpans | undefined;
  run: RunSpans | undefined;
  stopCounted: boolean;
}

/** Now, in milliseconds since the epoch to a fraction of one (a time the SDK takes as given). */
function now(): number {
  return performance.timeOrigin + performance.now();
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function linkOf(traceparent: string): Link | undefined {
  const m = TRACEPARENT.exec(traceparent);
  if (m === null) return undefined;
  const spanContext = {
    traceId: m[1] as string,
    spanId: m[2] as string,
    traceFlags: Number.parseInt(m[3] as string, 16),
    isRemote: true,
  };
  if (!isSpanContextValid(spanContext)) return undefined;
  return { context: spanContext, attributes: { [WARRANT.link]: "earlier-drive" } };
}

/**
 * `function` for tools this host runs (workspace, profiles, code, the definition's own skill,
 * memory and sub-agent tools); `extension` for MCP servers.
 */
function toolType(kind: ToolKind): string {
  switch (kind) {
    case "workspace":
    case "profile":
    case "code":
    case "definition":
      return "function";
    case "mcp":
      return "extension";
    default:
      return kind satisfies never;
  }
}

function fail(span: Span, type: string, message?: string): void {
  span.setAttribute(GENERAL.errorType, type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message === undefined ? {} : { message }) });
}

export function createTracingSubscriber(options: TracingOptions): TracingSubscriber {
  const tracer: Tracer = options.tracerProvider.getTracer(SCOPE_NAME, undefined, {
    schemaUrl: SCHEMA_URL,
  });
  const metrics: DriveMetrics | undefined =
    options.meterProvider === undefined ? undefined : createDriveMetrics(options.meterProvider);
  const capture = options.captureContent === true;
  const drives = new Map<string, DriveSpans>();
  /** The span of the eval cell each loop's drives belong under, while the cell runs. */
  const cellParents = new Map<string, Context>();

  const child = (
    parent: Context,
    name: string,
    attributes: Attributes,
    kind: SpanKind = SpanKind.INTERNAL,
    startTime?: TimeInput,
  ): Span =>
    tracer.startSpan(
      name,
      { kind, attributes, ...(startTime === undefined ? {} : { startTime }) },
      parent,
    );

  const endChat = (p: PassageSpans): void => {
    const chat = p.chat;
    if (chat === undefined) return;
    p.chat = undefined;
    chat.span.end();
  };

  const endPassage = (p: PassageSpans, interrupted: boolean): void => {
    if (interrupted) {
      if (p.tool !== undefined) fail(p.tool, "interrupted");
      if (p.chat !== undefined && !p.chat.awaitsRepair) fail(p.chat.span, "interrupted");
      fail(p.span, "interrupted");
    }
    p.tool?.end();
    p.tool = undefined;
    endChat(p);
    p.span.end();
  };

  const endRun = (r: RunSpans, interrupted: boolean): void => {
    if (interrupted) {
      if (r.step !== undefined) fail(r.step, "interrupted");
      fail(r.span, "interrupted");
    }
    r.step?.end();
    r.step = undefined;
    r.span.end();
  };

  /** Ends whatever of the drive is still open (as interrupted, when it was), then its root. */
  const endDrive = (query: string, d: DriveSpans, interrupted: boolean): void => {
    drives.delete(query);
    if (d.passage !== undefined) endPassage(d.passage, interrupted);
    if (d.run !== undefined) endRun(d.run, interrupted);
    d.root.end();
  };

  /** The innermost open span of a drive: where a fact its drive appended is told. */
  const innermost = (d: DriveSpans): Span =>
    d.run?.step ?? d.run?.span ?? d.passage?.span ?? d.root;

  /** A call's metric attributes: the passage's, with the model that answered or the error. */
  const metricAttributes = (
    calls: PassageCalls,
    error: string | undefined,
    answered: string | null | undefined,
  ): CallAttributes => {
    if (error !== undefined) return callAttributes({ ...calls.base, [GENERAL.errorType]: error });
    const model = answered ?? "";
    let made = calls.metrics.get(model);
    if (made === undefined) {
      made = callAttributes(
        model === "" ? calls.base : { ...calls.base, [GEN_AI.responseModel]: model },
      );
      // A server that names a new model on every answer cannot grow this without bound.
      if (calls.metrics.size < 16) calls.metrics.set(model, made);
    }
    return made;
  };

  const passageOf = (d: DriveSpans | undefined, ref: string): PassageSpans | undefined =>
    d?.passage?.ref === ref ? d.passage : undefined;

  const runOf = (d: DriveSpans | undefined, proposalRef: string): RunSpans | undefined =>
    d?.run?.proposalRef === proposalRef ? d.run : undefined;

  function observe(e: WarrantEvent): void {
    const d = drives.get(e.query);
    switch (e.kind) {
      case "drive-start": {
        if (d !== undefined) endDrive(e.query, d, true);
        const links = (e.earlierTraces ?? []).flatMap((t) => linkOf(t) ?? []);
        const parent = cellParents.get(e.query) ?? context.active();
        const root = tracer.startSpan(
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
        drives.set(e.query, {
          root,
          ctx: trace.setSpan(parent, root),
          passage: undefined,
          run: undefined,
          stopCounted: false,
        });
        return;
      }
      case "drive-end": {
        if (d === undefined) return;
        d.root.setAttribute(WARRANT.driveStatus, e.status);
        if (e.stop !== undefined) d.root.setAttribute(WARRANT.stopReason, e.stop);
        if (e.blocked !== undefined) d.root.setAttribute(WARRANT.blockedReason, e.blocked);
        if (e.error !== undefined) fail(d.root, e.error);
        endDrive(e.query, d, e.status === "failed");
        return;
      }
      case "fact":
        if (d === undefined) return;
        innermost(d).addEvent(EVENT.fact, {
          [WARRANT.factKind]: e.step.kind,
          [WARRANT.factSequence]: e.sequence,
        });
        metrics?.factAppended(e.step);
        return;
      case "passage-start": {
        if (d === undefined) return;
        if (d.passage !== undefined) endPassage(d.passage, true);
        const span = child(d.ctx, SPAN.agent(e.role), {
          [GEN_AI.operationName]: OPERATION.agent,
          [GEN_AI.agentName]: e.role,
          [GEN_AI.agentId]: e.agentId,
          ...(e.agentVersion === undefined ? {} : { [GEN_AI.agentVersion]: e.agentVersion }),
          [WARRANT.role]: e.role,
          [WARRANT.passageRef]: e.passageRef,
          [WARRANT.passageRedone]: e.redone,
        });
        d.passage = {
          ref: e.passageRef,
          span,
          ctx: trace.setSpan(d.ctx, span),
          role: e.role,
          chat: undefined,
          tool: undefined,
        };
        return;
      }
      case "passage-end": {
        const p = passageOf(d, e.passageRef);
        if (d === undefined || p === undefined) return;
        const span = p.span;
        if (e.outcome.ok) {
          span.setAttribute(WARRANT.messageType, e.outcome.type);
          if (e.outcome.refused !== undefined)
            span.setAttribute(WARRANT.planRefused, [...e.outcome.refused]);
        } else {
          // A failure's text can quote what the model said: content, so only when captured.
          fail(span, e.outcome.code, capture ? e.outcome.message : undefined);
        }
        const u = e.usage;
        if (u !== undefined) {
          span.setAttributes({
            [GEN_AI.inputTokens]: u.inputTokens,
            [GEN_AI.outputTokens]: u.outputTokens,
            [WARRANT.modelCalls]: u.modelCalls,
            [WARRANT.toolCalls]: u.toolCalls,
            [WARRANT.repairs]: u.repairs,
          });
          if (u.cachedInputTokens > 0)
            span.setAttribute(GEN_AI.cacheReadTokens, u.cachedInputTokens);
          if (u.reasoningTokens > 0) span.setAttribute(GEN_AI.reasoningTokens, u.reasoningTokens);
        }
        d.passage = undefined;
        endPassage(p, false);
        return;
      }
      case "model-call-start": {
        const p = passageOf(d, e.passageRef);
        if (p === undefined) return;
        endChat(p);
        if (p.calls?.providerId !== e.provider) {
          const t = e.target;
          const span: Attributes = {
            [GEN_AI.operationName]: OPERATION.chat,
            [GEN_AI.providerName]: t.provider,
            [GEN_AI.requestModel]: t.model,
            ...(t.server === undefined
              ? {}
              : { [GENERAL.serverAddress]: t.server.address, [GENERAL.serverPort]: t.server.port }),
          };
          p.calls = {
            providerId: e.provider,
            name: SPAN.chat(t.model),
            span,
            base: { ...span, [WARRANT.role]: p.role },
            metrics: new Map(),
          };
        }
        const span = child(p.ctx, p.calls.name, p.calls.span, SpanKind.CLIENT);
        if (capture && e.request !== undefined && span.isRecording()) {
          span.setAttribute(GEN_AI.systemInstructions, systemInstructions(e.request));
          span.setAttribute(GEN_AI.inputMessages, inputMessages(e.request));
        }
        p.chat = { span, awaitsRepair: false };
        return;
      }
      case "model-call-end": {
        const p = passageOf(d, e.passageRef);
        const chat = p?.chat;
        if (p === undefined || chat === undefined) return;
        const span = chat.span;
        const meta = e.response;
        const finish = meta?.finishReason ?? e.stop;
        if (meta?.model != null) span.setAttribute(GEN_AI.responseModel, meta.model);
        if (meta?.id != null) span.setAttribute(GEN_AI.responseId, meta.id);
        if (finish !== undefined) span.setAttribute(GEN_AI.finishReasons, [finish]);
        const u = e.usage;
        if (u !== undefined) {
          span.setAttribute(GEN_AI.inputTokens, u.inputTokens);
          span.setAttribute(GEN_AI.outputTokens, u.outputTokens);
          if (u.cachedInputTokens > 0)
            span.setAttribute(GEN_AI.cacheReadTokens, u.cachedInputTokens);
          if (u.reasoningTokens > 0) span.setAttribute(GEN_AI.reasoningTokens, u.reasoningTokens);
        }
        if (e.valid === false) span.setAttribute(WARRANT.turnValid, false);
        if (e.error !== undefined) fail(span, e.error);
        if (capture && e.output !== undefined && span.isRecording())
          span.setAttribute(GEN_AI.outputMessages, outputMessages(e.output, finish));
        if (metrics !== undefined && p.calls !== undefined)
          metrics.modelCall(metricAttributes(p.calls, e.error, meta?.model), e.latencyMs, e.usage);
        // An invalid turn is followed at once by its repair (when one is left): the span takes
        // that event first.
        if (e.valid === false) chat.awaitsRepair = true;
        else endChat(p);
        return;
      }
      case "repair": {
        const p = passageOf(d, e.passageRef);
        if (p === undefined) return;
        const attributes = { [WARRANT.repairCodes]: [...e.codes] };
        if (p.chat?.awaitsRepair === true) {
          p.chat.span.addEvent(EVENT.repair, attributes);
          endChat(p);
        } else p.span.addEvent(EVENT.repair, attributes);
        return;
      }
      case "tool-call-start": {
        const p = passageOf(d, e.passageRef);
        if (p === undefined) return;
        endChat(p);
        p.tool?.end();
        p.tool = child(p.ctx, SPAN.tool(e.name), {
          [GEN_AI.operationName]: OPERATION.tool,
          [GEN_AI.toolName]: e.name,
          [GEN_AI.toolCallId]: e.callId,
          [GEN_AI.toolType]: toolType(e.tool),
          [WARRANT.toolKind]: e.tool,
          ...(capture && e.args !== undefined
            ? { [GEN_AI.toolArguments]: JSON.stringify(e.args) }
            : {}),
        });
        return;
      }
      case "tool-call-end": {
        const p = passageOf(d, e.passageRef);
        const span = p?.tool;
        if (p === undefined || span === undefined) return;
        if (e.isError) fail(span, e.code ?? "tool_error");
        if (capture && e.result !== undefined) span.setAttribute(GEN_AI.toolResult, e.result);
        p.tool = undefined;
        span.end();
        return;
      }
      case "run-start": {
        if (d === undefined) return;
        if (d.run !== undefined) endRun(d.run, true);
        const span = child(d.ctx, SPAN.run(e.proposalRef), {
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
        return;
      }
      case "run-phase":
        (runOf(d, e.proposalRef)?.span ?? d?.root)?.addEvent(EVENT.phase, {
          [WARRANT.phase]: e.phase,
          [WARRANT.durationMs]: e.durationMs,
        });
        return;
      case "step-start": {
        const r = runOf(d, e.proposalRef);
        if (r === undefined) return;
        r.step?.end();
        r.step = child(r.ctx, SPAN.step(e.stepId), {
          [WARRANT.stepId]: e.stepId,
          [WARRANT.stepIndex]: e.index,
          [WARRANT.stepClass]: e.class,
          [WARRANT.stepAction]: e.action,
        });
        return;
      }
      case "step-end": {
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
        return;
      }
      case "check": {
        const r = runOf(d, e.proposalRef);
        if (r === undefined) return;
        const start = r.checkEnd ?? now() - e.durationMs;
        const end = start + e.durationMs;
        r.checkEnd = end;
        const span = child(
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
        return;
      }
      case "run-end": {
        if (d === undefined) return;
        // A run abandoned by an earlier drive is concluded by this one without starting again.
        const r =
          runOf(d, e.proposalRef) ??
          (() => {
            const span = child(d.ctx, SPAN.run(e.proposalRef), {
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
        return;
      }
      case "approval-requested":
        (runOf(d, e.proposalRef)?.span ?? d?.root)?.addEvent(EVENT.approvalRequested, {
          [WARRANT.approvalStep]: e.step,
          [WARRANT.approvalKind]: e.approval,
          [WARRANT.proposalRef]: e.proposalRef,
          ...(capture ? { [WARRANT.approvalDescription]: e.description } : {}),
        });
        return;
      case "approval-answered":
        (runOf(d, e.proposalRef)?.span ?? d?.root)?.addEvent(EVENT.approvalAnswered, {
          [WARRANT.approvalStep]: e.step,
          [WARRANT.approvalKind]: e.approval,
          [WARRANT.proposalRef]: e.proposalRef,
          [WARRANT.approvalAnswer]: e.answer,
          [WARRANT.approvalBy]: e.by,
        });
        return;
      case "summary-skipped":
        d?.root.addEvent(EVENT.summarySkipped, {
          [WARRANT.proposalRef]: e.proposalRef,
          [WARRANT.detail]: e.detail,
        });
        return;
      case "blocked":
        d?.root.addEvent(e.reason === "budget" ? EVENT.budgetRefused : EVENT.blocked, {
          [WARRANT.blockedReason]: e.reason,
          ...(e.counter === undefined ? {} : { [WARRANT.budgetCounter]: e.counter }),
          // The detail can quote the model (an operator question): content, only when captured.
          ...(capture ? { [WARRANT.blockedDetail]: e.detail } : {}),
        });
        return;
      case "lease-lost":
        d?.root.addEvent(EVENT.leaseLost, { [GENERAL.errorType]: e.code });
        return;
      case "stop":
        // Counted once per drive that finds its loop stopped; a stopped loop that is only looked
        // at again (no drive) is not a new stop.
        if (d === undefined || d.stopCounted) return;
        d.stopCounted = true;
        d.root.setAttribute(WARRANT.stopReason, e.reason);
        metrics?.loopStopped(e.reason);
        return;
      default:
        e satisfies never;
    }
  }

  return {
    observe,
    evalSpan(attributes) {
      const span = tracer.startSpan(
        SPAN.eval,
        { kind: SpanKind.INTERNAL, attributes },
        context.active(),
      );
      const ctx = trace.setSpan(context.active(), span);
      const close = (s: Span, attrs: Attributes, error?: string) => {
        s.setAttributes(attrs);
        if (error !== undefined) fail(s, error);
        s.end();
      };
      return {
        cell(query, attrs) {
          const name = SPAN.cell(
            String(attrs[WARRANT.cellTask] ?? ""),
            String(attrs[WARRANT.cellAgent] ?? ""),
            Number(attrs[WARRANT.cellEpoch] ?? 0),
          );
          const cell = tracer.startSpan(
            name,
            { kind: SpanKind.INTERNAL, attributes: { ...attrs, [WARRANT.query]: query } },
            ctx,
          );
          cellParents.set(query, trace.setSpan(ctx, cell));
          return {
            end(a, error) {
              if (cellParents.get(query) !== undefined) cellParents.delete(query);
              close(cell, a, error);
            },
          };
        },
        end: (a, error) => close(span, a, error),
      };
    },
    traceparent(query) {
      const span = drives.get(query)?.root;
      if (span === undefined) return undefined;
      const c = span.spanContext();
      // A drive its sampler left out has no trace to link to.
      if (!isSpanContextValid(c) || (c.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
      return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
    },
    interrupt() {
      for (const [query, d] of [...drives]) {
        d.root.setAttribute(WARRANT.driveStatus, "interrupted");
        fail(d.root, "interrupted");
        endDrive(query, d, true);
      }
    },
  };
}
