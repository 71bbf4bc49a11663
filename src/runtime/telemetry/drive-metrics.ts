// The metrics a drive's events feed: model-call duration and token usage (GenAI client histograms,
// by provider, model and role), loop stops by reason, and budget spent by counter.
import type { Attributes, Counter, Histogram, MeterProvider } from "@opentelemetry/api";
import type { LimitKey, Step, Stop } from "../../core/loop/types.js";
import type { Usage } from "../../core/ports/model-provider.js";
import { BUCKETS, GEN_AI, METRIC, SCHEMA_URL, SCOPE_NAME, WARRANT } from "./names.js";

/**
 * The attributes of one kind of model call (provider, model, role, …), made once and reused for
 * every call of that kind: the SDK hashes what it is given on every record, and objects built per
 * call would be garbage per call.
 */
export interface CallAttributes {
  readonly duration: Attributes;
  readonly inputTokens: Attributes;
  readonly outputTokens: Attributes;
}

export function callAttributes(base: Attributes): CallAttributes {
  return {
    duration: base,
    inputTokens: { ...base, [GEN_AI.tokenType]: "input" },
    outputTokens: { ...base, [GEN_AI.tokenType]: "output" },
  };
}

export interface DriveMetrics {
  /** One model call: its duration, and its tokens when it was answered. */
  modelCall(attributes: CallAttributes, latencyMs: number, usage: Usage | undefined): void;
  loopStopped(reason: Stop["reason"]): void;
  /** What an appended fact spent of the loop's budget. */
  factAppended(step: Step): void;
}

/** The budget counters a fact spends (the loop's limits it counts against). */
function countersSpentBy(step: Step): readonly LimitKey[] {
  switch (step.kind) {
    case "passage-charged":
      return step.role === "implementer"
        ? ["max/passages", "max/solver-passages"]
        : step.role === "reviewer"
          ? ["max/passages", "max/reviewer-passages"]
          : ["max/passages"];
    case "cycle-opened":
      return ["max/cycles"];
    case "run-admitted":
      return ["max/experiments"];
    case "opened":
    case "concluded":
    case "renewed":
    case "cancelled":
      return [];
    default:
      return step satisfies never;
  }
}

export function createDriveMetrics(provider: MeterProvider): DriveMetrics {
  const meter = provider.getMeter(SCOPE_NAME, undefined, { schemaUrl: SCHEMA_URL });
  const duration: Histogram = meter.createHistogram(METRIC.operationDuration, {
    unit: "s",
    description: "GenAI operation duration",
    advice: { explicitBucketBoundaries: [...BUCKETS.durationSeconds] },
  });
  const tokens: Histogram = meter.createHistogram(METRIC.tokenUsage, {
    unit: "{token}",
    description: "Number of input and output tokens used",
    advice: { explicitBucketBoundaries: [...BUCKETS.tokens] },
  });
  const stops: Counter = meter.createCounter(METRIC.loopStops, {
    unit: "{stop}",
    description: "Loops stopped, by reason",
  });
  const spent: Counter = meter.createCounter(METRIC.budgetSpent, {
    unit: "{charge}",
    description: "Budget spent, by the loop limit it counts against",
  });
  // Each counter's and each stop reason's attributes, made once: the SDK hashes the object it is
  // given on every add, and one built per fact would be garbage per fact.
  const counterAttributes = new Map<LimitKey, Attributes>();
  const reasonAttributes = new Map<Stop["reason"], Attributes>();
  return {
    modelCall(attributes, latencyMs, usage) {
      duration.record(latencyMs / 1000, attributes.duration);
      if (usage === undefined) return;
      tokens.record(usage.inputTokens, attributes.inputTokens);
      tokens.record(usage.outputTokens, attributes.outputTokens);
    },
    loopStopped(reason) {
      let attributes = reasonAttributes.get(reason);
      if (attributes === undefined) {
        attributes = { [WARRANT.stopReason]: reason };
        reasonAttributes.set(reason, attributes);
      }
      stops.add(1, attributes);
    },
    factAppended(step) {
      for (const counter of countersSpentBy(step)) {
        let attributes = counterAttributes.get(counter);
        if (attributes === undefined) {
          attributes = { [WARRANT.budgetCounter]: counter };
          counterAttributes.set(counter, attributes);
        }
        spent.add(1, attributes);
      }
    },
  };
}
