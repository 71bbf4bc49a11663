// Tracing as a subscriber of the event stream: paired events become spans (a drive's root
// `invoke_workflow`, its `invoke_agent` passages with their `chat` and `execute_tool` calls, its
// `warrant.run`s with their steps and checks), single events become span events, and the metrics
// are fed on the way. It only reads events; it never reaches back into the drive. Only the
// OpenTelemetry API is used here: the SDK behind the providers is the composition's choice. Each
// kind of event has its handler, in one module per family (tracing-drive.ts, tracing-passage.ts,
// tracing-run.ts); the table below is checked to hold every kind.
import {
  type Attributes,
  context,
  isSpanContextValid,
  type Span,
  SpanKind,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import type { WarrantEvent } from "../events.js";
import { SPAN, WARRANT } from "./names.js";
import { driveHandlers } from "./tracing-drive.js";
import { passageHandlers } from "./tracing-passage.js";
import { runHandlers } from "./tracing-run.js";
import {
  createTracing,
  type EventHandler,
  type EventHandlers,
  fail,
  type Tracing,
  type TracingOptions,
} from "./tracing-state.js";

export type { TracingOptions } from "./tracing-state.js";

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

/** Every kind of event's handler. */
const HANDLERS: EventHandlers<WarrantEvent["kind"]> = {
  ...driveHandlers,
  ...passageHandlers,
  ...runHandlers,
};

function handle<K extends WarrantEvent["kind"]>(
  e: Extract<WarrantEvent, { kind: K }>,
  t: Tracing,
): void {
  (HANDLERS[e.kind] as EventHandler<K>)(e, t.drives.get(e.query), t);
}

/** Starts an eval's span: each cell a span under it, each cell's drives under the cell. */
function startEvalSpan(t: Tracing, attributes: Attributes): EvalSpan {
  const span = t.tracer.startSpan(
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
      const cell = t.tracer.startSpan(
        name,
        { kind: SpanKind.INTERNAL, attributes: { ...attrs, [WARRANT.query]: query } },
        ctx,
      );
      t.cellParents.set(query, trace.setSpan(ctx, cell));
      return {
        end(a, error) {
          if (t.cellParents.get(query) !== undefined) t.cellParents.delete(query);
          close(cell, a, error);
        },
      };
    },
    end: (a, error) => close(span, a, error),
  };
}

export function createTracingSubscriber(options: TracingOptions): TracingSubscriber {
  const t = createTracing(options);
  return {
    observe: (e) => handle(e, t),
    evalSpan: (attributes) => startEvalSpan(t, attributes),
    traceparent(query) {
      const span = t.drives.get(query)?.root;
      if (span === undefined) return undefined;
      const c = span.spanContext();
      // A drive its sampler left out has no trace to link to.
      if (!isSpanContextValid(c) || (c.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
      return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
    },
    interrupt() {
      for (const [query, d] of [...t.drives]) {
        d.root.setAttribute(WARRANT.driveStatus, "interrupted");
        fail(d.root, "interrupted");
        t.endDrive(query, d, true);
      }
    },
  };
}
