// What the tracing subscriber keeps while it turns events into spans: the open spans of each drive
// (its root, the passage with its chat and tool call, the run with its step), the eval cells drives
// belong under, and the helpers every event family's handlers share (tracing-drive.ts,
// tracing-passage.ts, tracing-run.ts). Only the OpenTelemetry API is used here.
import {
  type Attributes,
  type Context,
  isSpanContextValid,
  type Link,
  type MeterProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TimeInput,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import type { Role } from "../../core/loop/types.js";
import type { ToolKind, WarrantEvent } from "../events.js";
import {
  type CallAttributes,
  callAttributes,
  createDriveMetrics,
  type DriveMetrics,
} from "./drive-metrics.js";
import { GEN_AI, GENERAL, SCHEMA_URL, SCOPE_NAME, WARRANT } from "./names.js";

export interface TracingOptions {
  readonly tracerProvider: TracerProvider;
  /** Where the metrics go; none are recorded without one. */
  readonly meterProvider?: MeterProvider;
  /** Record prompts, answers, tool arguments and results, and approval diffs (default false). */
  readonly captureContent?: boolean;
}

export interface ChatSpan {
  readonly span: Span;
  /** The call ended with an invalid turn: the span stays open for the repair that follows. */
  awaitsRepair: boolean;
}

export interface PassageSpans {
  readonly ref: string;
  readonly span: Span;
  readonly ctx: Context;
  readonly role: Role;
  /** The chat spans' attributes and the metrics', made at its first call (one provider a passage). */
  calls?: PassageCalls;
  chat: ChatSpan | undefined;
  tool: Span | undefined;
}

export interface PassageCalls {
  readonly providerId: string;
  /** `chat {model}`. */
  readonly name: string;
  readonly span: Attributes;
  readonly base: Attributes;
  /** The metrics' attributes, by the model that answered ("" when none was named). */
  readonly metrics: Map<string, CallAttributes>;
}

export interface RunSpans {
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

export interface DriveSpans {
  readonly root: Span;
  readonly ctx: Context;
  passage: PassageSpans | undefined;
  run: RunSpans | undefined;
  stopCounted: boolean;
}

/** Now, in milliseconds since the epoch to a fraction of one (a time the SDK takes as given). */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function linkOf(traceparent: string): Link | undefined {
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
export function toolType(kind: ToolKind): string {
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

export function fail(span: Span, type: string, message?: string): void {
  span.setAttribute(GENERAL.errorType, type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message === undefined ? {} : { message }) });
}

export function endChat(p: PassageSpans): void {
  const chat = p.chat;
  if (chat === undefined) return;
  p.chat = undefined;
  chat.span.end();
}

export function endPassage(p: PassageSpans, interrupted: boolean): void {
  if (interrupted) {
    if (p.tool !== undefined) fail(p.tool, "interrupted");
    if (p.chat !== undefined && !p.chat.awaitsRepair) fail(p.chat.span, "interrupted");
    fail(p.span, "interrupted");
  }
  p.tool?.end();
  p.tool = undefined;
  endChat(p);
  p.span.end();
}

export function endRun(r: RunSpans, interrupted: boolean): void {
  if (interrupted) {
    if (r.step !== undefined) fail(r.step, "interrupted");
    fail(r.span, "interrupted");
  }
  r.step?.end();
  r.step = undefined;
  r.span.end();
}

/** The innermost open span of a drive: where a fact its drive appended is told. */
export const innermost = (d: DriveSpans): Span =>
  d.run?.step ?? d.run?.span ?? d.passage?.span ?? d.root;

/** A call's metric attributes: the passage's, with the model that answered or the error. */
export function metricAttributes(
  calls: PassageCalls,
  error: string | undefined,
  answered: string | null | undefined,
): CallAttributes {
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
}

export const passageOf = (d: DriveSpans | undefined, ref: string): PassageSpans | undefined =>
  d?.passage?.ref === ref ? d.passage : undefined;

export const runOf = (d: DriveSpans | undefined, proposalRef: string): RunSpans | undefined =>
  d?.run?.proposalRef === proposalRef ? d.run : undefined;

/** The subscriber's state and the helpers that need it. */
export interface Tracing {
  readonly tracer: Tracer;
  readonly metrics: DriveMetrics | undefined;
  /** Content (prompts, answers, arguments, results, diffs) is recorded. */
  readonly capture: boolean;
  /** The open spans of each drive now traced, by query. */
  readonly drives: Map<string, DriveSpans>;
  /** The span of the eval cell each loop's drives belong under, while the cell runs. */
  readonly cellParents: Map<string, Context>;
  /** A span under `parent`. */
  child(
    parent: Context,
    name: string,
    attributes: Attributes,
    kind?: SpanKind,
    startTime?: TimeInput,
  ): Span;
  /** Ends whatever of the drive is still open (as interrupted, when it was), then its root. */
  endDrive(query: string, d: DriveSpans, interrupted: boolean): void;
}

export function createTracing(options: TracingOptions): Tracing {
  const tracer: Tracer = options.tracerProvider.getTracer(SCOPE_NAME, undefined, {
    schemaUrl: SCHEMA_URL,
  });
  const drives = new Map<string, DriveSpans>();
  return {
    tracer,
    metrics:
      options.meterProvider === undefined ? undefined : createDriveMetrics(options.meterProvider),
    capture: options.captureContent === true,
    drives,
    cellParents: new Map(),
    child: (parent, name, attributes, kind = SpanKind.INTERNAL, startTime) =>
      tracer.startSpan(
        name,
        { kind, attributes, ...(startTime === undefined ? {} : { startTime }) },
        parent,
      ),
    endDrive(query, d, interrupted) {
      drives.delete(query);
      if (d.passage !== undefined) endPassage(d.passage, interrupted);
      if (d.run !== undefined) endRun(d.run, interrupted);
      d.root.end();
    },
  };
}

/** What one event does to the spans: `d` is its drive's open spans, when it is traced. */
export type EventHandler<K extends WarrantEvent["kind"]> = (
  e: Extract<WarrantEvent, { kind: K }>,
  d: DriveSpans | undefined,
  t: Tracing,
) => void;

/** Handlers of some kinds of event: one module per family. */
export type EventHandlers<K extends WarrantEvent["kind"]> = { readonly [P in K]: EventHandler<P> };
