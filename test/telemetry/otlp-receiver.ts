// A real OTLP/HTTP receiver for tests: it listens on a local port, takes POST /v1/traces and
// /v1/metrics in protobuf (decoded with the reader @opentelemetry/otlp-transformer ships) or JSON,
// into the official request types, and keeps every span, metric point and raw request body.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import type {
  Fixed64,
  IAnyValue,
  IKeyValue,
} from "@opentelemetry/otlp-transformer/build/src/common/internal-types.js";
import type { IExportMetricsServiceRequest } from "@opentelemetry/otlp-transformer/build/src/metrics/internal-types.js";
import type { IExportTraceServiceRequest } from "@opentelemetry/otlp-transformer/build/src/trace/internal-types.js";
import { decodeMetricsRequest, decodeTraceRequest } from "./otlp-protobuf.js";

export type AttrValue = string | number | boolean | null | AttrValue[] | { [k: string]: AttrValue };
export type Attrs = Record<string, AttrValue>;
export type Encoding = "protobuf" | "json";

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** SpanKind as OTLP numbers it: 1 internal, 3 client. */
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Attrs;
  readonly events: readonly { name: string; timeNs: bigint; attributes: Attrs }[];
  readonly links: readonly { traceId: string; spanId: string; attributes: Attrs }[];
  /** 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message?: string };
  readonly resource: Attrs;
  readonly scope: string;
  readonly schemaUrl?: string;
  readonly encoding: Encoding;
}

export interface ReceivedPoint {
  readonly attributes: Attrs;
  /** A sum's or gauge's value. */
  readonly value?: number;
  /** A histogram's count and sum. */
  readonly count?: number;
  readonly sum?: number;
}

export interface ReceivedMetric {
  readonly name: string;
  readonly unit: string;
  readonly kind: "sum" | "gauge" | "histogram" | "other";
  readonly points: readonly ReceivedPoint[];
  readonly scope: string;
  readonly encoding: Encoding;
}

export interface RawRequest {
  readonly path: string;
  readonly contentType: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:PORT`: the base for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly metrics: ReceivedMetric[];
  readonly requests: RawRequest[];
  /** Resolves once `check` holds (polling); rejects after `ms`. */
  until(check: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** `answer` (default): 200 at once; `hang`: read the request and never answer. */
  readonly mode?: "answer" | "hang";
}

const hex = (id: string | Uint8Array | undefined): string =>
  id === undefined
    ? ""
    : typeof id === "string"
      ? id.toLowerCase()
      : Buffer.from(id).toString("hex");

function nanos(t: Fixed64 | undefined): bigint {
  if (t === undefined) return 0n;
  if (typeof t === "string") return BigInt(t);
  if (typeof t === "number") return BigInt(Math.round(t));
  return (BigInt(t.high >>> 0) << 32n) | BigInt(t.low >>> 0);
}

function attrValue(v: IAnyValue | undefined): AttrValue {
  if (v === undefined) return null;
  if (v.stringValue !== undefined && v.stringValue !== null) return v.stringValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  if (v.intValue !== undefined && v.intValue !== null) return Number(v.intValue);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return Number(v.doubleValue);
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(attrValue);
  if (v.kvlistValue !== undefined) return attrs(v.kvlistValue.values);
  return null;
}

function attrs(kvs: readonly IKeyValue[] | undefined): Attrs {
  const out: Attrs = {};
  for (const kv of kvs ?? []) out[kv.key] = attrValue(kv.value);
  return out;
}

function spansOf(request: IExportTraceServiceRequest, encoding: Encoding): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map(
        (s): ReceivedSpan => ({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: s.name,
          kind: Number(s.kind ?? 0),
          startNs: nanos(s.startTimeUnixNano),
          endNs: nanos(s.endTimeUnixNano),
          attributes: attrs(s.attributes),
          events: (s.events ?? []).map((e) => ({
            name: e.name,
            timeNs: nanos(e.timeUnixNano),
            attributes: attrs(e.attributes),
          })),
          links: (s.links ?? []).map((l) => ({
            traceId: hex(l.traceId),
            spanId: hex(l.spanId),
            attributes: attrs(l.attributes),
          })),
          status: {
            code: Number(s.status?.code ?? 0),
            ...(s.status?.message ? { message: s.status.message } : {}),
          },
          resource: attrs(rs.resource?.attributes),
          scope: ss.scope?.name ?? "",
          ...(ss.schemaUrl ? { schemaUrl: ss.schemaUrl } : {}),
          encoding,
        }),
      ),
    ),
  );
}

function metricsOf(request: IExportMetricsServiceRequest, encoding: Encoding): ReceivedMetric[] {
  return (request.resourceMetrics ?? []).flatMap((rm) =>
    (rm.scopeMetrics ?? []).flatMap((sm) =>
      (sm.metrics ?? []).map((m): ReceivedMetric => {
        const scope = sm.scope?.name ?? "";
        const base = { name: m.name, unit: m.unit ?? "", scope, encoding };
        if (m.histogram !== undefined)
          return {
            ...base,
            kind: "histogram",
            points: (m.histogram.dataPoints ?? []).map((p) => ({
              attributes: attrs(p.attributes),
              count: Number(p.count ?? 0),
              sum: Number(p.sum ?? 0),
            })),
          };
        const numbers = m.sum ?? m.gauge;
        if (numbers !== undefined)
          return {
            ...base,
            kind: m.sum !== undefined ? "sum" : "gauge",
            points: (numbers.dataPoints ?? []).map((p) => ({
              attributes: attrs(p.attributes),
              value: Number(p.asDouble ?? p.asInt ?? 0),
            })),
          };
        return { ...base, kind: "other", points: [] };
      }),
    ),
  );
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
}

export async function startOtlpReceiver(options: ReceiverOptions = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const requests: RawRequest[] = [];
  const hanging = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const contentType = String(req.headers["content-type"] ?? "");
      const path = req.url ?? "";
      requests.push({ path, contentType, headers: req.headers, body });
      if (options.mode === "hang") {
        hanging.add(() => res.destroy());
        return;
      }
      const json = contentType.startsWith("application/json");
      const encoding: Encoding = json ? "json" : "protobuf";
      try {
        if (path === "/v1/traces") {
          const request = json
            ? (JSON.parse(body.toString("utf8")) as IExportTraceServiceRequest)
            : decodeTraceRequest(body);
          spans.push(...spansOf(request, encoding));
        } else if (path === "/v1/metrics") {
          const request = json
            ? (JSON.parse(body.toString("utf8")) as IExportMetricsServiceRequest)
            : decodeMetricsRequest(body);
          metrics.push(...metricsOf(request, encoding));
        } else {
          res.writeHead(404).end();
          return;
        }
      } catch (e) {
        res.writeHead(400, { "content-type": "text/plain" }).end(String(e));
        return;
      }
      res
        .writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" })
        .end(json ? "{}" : "");
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metrics,
    requests,
    async until(check, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!check()) {
        if (Date.now() > deadline) throw new Error("the receiver did not get what was awaited");
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      for (const end of hanging) end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
