// OTLP protobuf requests decoded into the official @opentelemetry/otlp-transformer request types,
// with the reader that package ships; the message layouts are those of opentelemetry-proto
// (collector/trace/v1, collector/metrics/v1). Only what a receiver in a test needs: int64 values
// beyond 2^53 are not, so they lose precision.

import { ProtobufReader } from "@opentelemetry/otlp-transformer/build/src/common/protobuf/protobuf-reader.js";
import type { IExportMetricsServiceRequest } from "@opentelemetry/otlp-transformer/build/src/metrics/internal-types.js";
import type { IExportTraceServiceRequest } from "@opentelemetry/otlp-transformer/build/src/trace/internal-types.js";

type Scalar = "string" | "bytes" | "varint" | "bool" | "fixed64" | "fixed32" | "double";
interface Field {
  readonly name: string;
  readonly type: Scalar | (() => Schema);
  readonly repeated?: boolean;
}
type Schema = Readonly<Record<number, Field>>;

const WIRE_VARINT = 0;
const WIRE_64 = 1;
const WIRE_LEN = 2;
const WIRE_32 = 5;

const KeyValue: Schema = {
  1: { name: "key", type: "string" },
  2: { name: "value", type: () => AnyValue },
};
const ArrayValue: Schema = { 1: { name: "values", type: () => AnyValue, repeated: true } };
const KeyValueList: Schema = { 1: { name: "values", type: () => KeyValue, repeated: true } };
const AnyValue: Schema = {
  1: { name: "stringValue", type: "string" },
  2: { name: "boolValue", type: "bool" },
  3: { name: "intValue", type: "varint" },
  4: { name: "doubleValue", type: "double" },
  5: { name: "arrayValue", type: () => ArrayValue },
  6: { name: "kvlistValue", type: () => KeyValueList },
  7: { name: "bytesValue", type: "bytes" },
};
const attributes = (n: number): Schema => ({
  [n]: { name: "attributes", type: () => KeyValue, repeated: true },
});
const Resource: Schema = {
  ...attributes(1),
  2: { name: "droppedAttributesCount", type: "varint" },
};
const Scope: Schema = {
  1: { name: "name", type: "string" },
  2: { name: "version", type: "string" },
  ...attributes(3),
};
const SpanEvent: Schema = {
  1: { name: "timeUnixNano", type: "fixed64" },
  2: { name: "name", type: "string" },
  ...attributes(3),
};
const SpanLink: Schema = {
  1: { name: "traceId", type: "bytes" },
  2: { name: "spanId", type: "bytes" },
  3: { name: "traceState", type: "string" },
  ...attributes(4),
  6: { name: "flags", type: "fixed32" },
};
const Status: Schema = {
  2: { name: "message", type: "string" },
  3: { name: "code", type: "varint" },
};
const Span: Schema = {
  1: { name: "traceId", type: "bytes" },
  2: { name: "spanId", type: "bytes" },
  3: { name: "traceState", type: "string" },
  4: { name: "parentSpanId", type: "bytes" },
  5: { name: "name", type: "string" },
  6: { name: "kind", type: "varint" },
  7: { name: "startTimeUnixNano", type: "fixed64" },
  8: { name: "endTimeUnixNano", type: "fixed64" },
  ...attributes(9),
  10: { name: "droppedAttributesCount", type: "varint" },
  11: { name: "events", type: () => SpanEvent, repeated: true },
  12: { name: "droppedEventsCount", type: "varint" },
  13: { name: "links", type: () => SpanLink, repeated: true },
  14: { name: "droppedLinksCount", type: "varint" },
  15: { name: "status", type: () => Status },
  16: { name: "flags", type: "fixed32" },
};
const ScopeSpans: Schema = {
  1: { name: "scope", type: () => Scope },
  2: { name: "spans", type: () => Span, repeated: true },
  3: { name: "schemaUrl", type: "string" },
};
const ResourceSpans: Schema = {
  1: { name: "resource", type: () => Resource },
  2: { name: "scopeSpans", type: () => ScopeSpans, repeated: true },
  3: { name: "schemaUrl", type: "string" },
};
const TraceRequest: Schema = {
  1: { name: "resourceSpans", type: () => ResourceSpans, repeated: true },
};

const NumberDataPoint: Schema = {
  2: { name: "startTimeUnixNano", type: "fixed64" },
  3: { name: "timeUnixNano", type: "fixed64" },
  4: { name: "asDouble", type: "double" },
  6: { name: "asInt", type: "fixed64" },
  ...attributes(7),
  8: { name: "flags", type: "varint" },
};
const HistogramDataPoint: Schema = {
  2: { name: "startTimeUnixNano", type: "fixed64" },
  3: { name: "timeUnixNano", type: "fixed64" },
  4: { name: "count", type: "fixed64" },
  5: { name: "sum", type: "double" },
  6: { name: "bucketCounts", type: "fixed64", repeated: true },
  7: { name: "explicitBounds", type: "double", repeated: true },
  ...attributes(9),
  10: { name: "flags", type: "varint" },
  11: { name: "min", type: "double" },
  12: { name: "max", type: "double" },
};
const Sum: Schema = {
  1: { name: "dataPoints", type: () => NumberDataPoint, repeated: true },
  2: { name: "aggregationTemporality", type: "varint" },
  3: { name: "isMonotonic", type: "bool" },
};
const Gauge: Schema = { 1: { name: "dataPoints", type: () => NumberDataPoint, repeated: true } };
const Histogram: Schema = {
  1: { name: "dataPoints", type: () => HistogramDataPoint, repeated: true },
  2: { name: "aggregationTemporality", type: "varint" },
};
const Metric: Schema = {
  1: { name: "name", type: "string" },
  2: { name: "description", type: "string" },
  3: { name: "unit", type: "string" },
  5: { name: "gauge", type: () => Gauge },
  7: { name: "sum", type: () => Sum },
  9: { name: "histogram", type: () => Histogram },
};
const ScopeMetrics: Schema = {
  1: { name: "scope", type: () => Scope },
  2: { name: "metrics", type: () => Metric, repeated: true },
  3: { name: "schemaUrl", type: "string" },
};
const ResourceMetrics: Schema = {
  1: { name: "resource", type: () => Resource },
  2: { name: "scopeMetrics", type: () => ScopeMetrics, repeated: true },
  3: { name: "schemaUrl", type: "string" },
};
const MetricsRequest: Schema = {
  1: { name: "resourceMetrics", type: () => ResourceMetrics, repeated: true },
};

/** Reads fixed-width values at the reader's position (the shipped reader has no such method). */
function fixed(reader: ProtobufReader, view: DataView, width: 4 | 8): DataView {
  const at = reader.pos;
  if (at + width > view.byteLength) throw new Error("truncated fixed-width field");
  reader.pos = at + width;
  return new DataView(view.buffer, view.byteOffset + at, width);
}

function scalar(reader: ProtobufReader, view: DataView, type: Scalar, wire: number): unknown {
  switch (type) {
    case "string":
      return reader.readString();
    case "bytes":
      return reader.readBytes();
    case "varint":
      return reader.readVarint();
    case "bool":
      return reader.readVarint() !== 0;
    case "fixed64":
      return wire === WIRE_64 ? fixed(reader, view, 8).getBigUint64(0, true).toString() : undefined;
    case "fixed32":
      return fixed(reader, view, 4).getUint32(0, true);
    case "double":
      return fixed(reader, view, 8).getFloat64(0, true);
    default:
      return type satisfies never;
  }
}

function decodeMessage(bytes: Uint8Array, schema: Schema): Record<string, unknown> {
  const reader = new ProtobufReader(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, unknown> = {};
  const put = (field: Field, value: unknown) => {
    if (field.repeated !== true) {
      out[field.name] = value;
      return;
    }
    const list = (out[field.name] as unknown[] | undefined) ?? [];
    list.push(value);
    out[field.name] = list;
  };
  while (!reader.isAtEnd()) {
    const { fieldNumber, wireType } = reader.readTag();
    const field = schema[fieldNumber];
    if (field === undefined) {
      reader.skip(wireType);
      continue;
    }
    if (typeof field.type === "function") {
      put(field, decodeMessage(reader.readBytes(), field.type()));
    } else if (field.repeated === true && wireType === WIRE_LEN && field.type !== "string") {
      // A packed run of fixed-width numbers.
      const packed = reader.readBytes();
      const inner = new ProtobufReader(packed);
      const innerView = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
      const wire = field.type === "fixed32" ? WIRE_32 : WIRE_64;
      while (!inner.isAtEnd()) put(field, scalar(inner, innerView, field.type, wire));
    } else if (
      wireType === WIRE_VARINT ||
      wireType === WIRE_64 ||
      wireType === WIRE_32 ||
      wireType === WIRE_LEN
    ) {
      put(field, scalar(reader, view, field.type, wireType));
    } else {
      reader.skip(wireType);
    }
  }
  return out;
}

export function decodeTraceRequest(bytes: Uint8Array): IExportTraceServiceRequest {
  return decodeMessage(bytes, TraceRequest) as unknown as IExportTraceServiceRequest;
}

export function decodeMetricsRequest(bytes: Uint8Array): IExportMetricsServiceRequest {
  return decodeMessage(bytes, MetricsRequest) as unknown as IExportMetricsServiceRequest;
}
