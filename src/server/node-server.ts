// Mounts a fetch handler on node:http: each request becomes a web Request whose body is read only
// when the handler reads it (so a handler that refuses first reads nothing), each Response is
// streamed back; a client that goes away aborts the request's signal and cancels the response body
// (so an event stream ends). A request this layer cannot make a Request of (a target that is not a
// path, a missing or malformed Host, a malformed message) is answered 400 with a code here; every
// response, its own and the handler's, carries the headers that forbid framing.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type HttpCode, httpStatus } from "../library/errors.js";
import { normalizeHost } from "./allowed-hosts.js";
import { denyFraming } from "./frame-headers.js";

export interface MountedServer {
  readonly port: number;
  close(): Promise<void>;
}

/** The request's body as a stream that pulls from the socket only as it is read. */
function lazyBody(req: http.IncomingMessage): ReadableStream<Uint8Array> {
  let chunks: AsyncIterator<Buffer> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        chunks ??= req[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        const { done, value } = await chunks.next();
        if (done === true) controller.close();
        else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      },
      async cancel() {
        await chunks?.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

function headersOf(raw: Readonly<Record<string, string | string[] | number | undefined>>): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, String(one));
  }
  return headers;
}

function plain(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

/** A refusal written by this layer: JSON, framing forbidden, the connection closed after it. */
function refusalHead(code: HttpCode, message: string): [number, Headers, string] {
  const headers = new Headers({
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    connection: "close",
  });
  denyFraming(headers);
  return [httpStatus(code), headers, `${JSON.stringify({ ok: false, code, message })}\n`];
}

function refuse(res: http.ServerResponse, code: HttpCode, message: string): void {
  const [s, headers, body] = refusalHead(code, message);
  res.writeHead(s, plain(headers));
  res.end(body);
}

/** Why a request target is not one this server answers: only origin-form (`/path?query`) is. */
function badTarget(target: string): string | undefined {
  if (target.startsWith("/")) return undefined;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(target))
    return "an absolute-form request target (a proxy request) is not served: send the path only";
  return `the request target ${JSON.stringify(target.slice(0, 200))} is not a path (/…)`;
}

export function mountFetchHandler(
  handle: (request: Request) => Promise<Response>,
  host: string,
  port: number,
): Promise<MountedServer> {
  const server = http.createServer({ requireHostHeader: false }, async (req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    try {
      const method = req.method ?? "GET";
      const target = req.url ?? "/";
      const why = badTarget(target);
      if (why !== undefined) return refuse(res, "request/bad-target", why);
      const hostHeader = req.headers.host;
      const authority = hostHeader === undefined ? undefined : normalizeHost(hostHeader);
      if (authority === undefined)
        return refuse(
          res,
          "request/bad-host",
          hostHeader === undefined
            ? "the request has no Host header"
            : `the Host header ${JSON.stringify(hostHeader.slice(0, 200))} is not a host[:port]`,
        );
      let url: URL;
      try {
        url = new URL(`http://${authority}${target}`);
      } catch {
        return refuse(res, "request/bad-target", "the request target is not a URL path");
      }
      const hasBody = method !== "GET" && method !== "HEAD";
      const request = new Request(url, {
        method,
        headers: headersOf(req.headers),
        signal: controller.signal,
        ...(hasBody ? { body: lazyBody(req), duplex: "half" as const } : {}),
      });
      const response = await handle(request);
      const headers = new Headers(response.headers);
      denyFraming(headers);
      // A body the handler did not read (a refusal) is not read here either: the connection ends
      // with the response instead of draining what the client still sends.
      if (hasBody && !req.complete) headers.set("connection", "close");
      res.writeHead(response.status, plain(headers));
      if (response.body === null || method === "HEAD") {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      res.on("close", () => void reader.cancel().catch(() => {}));
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!res.write(value))
          await new Promise((r) => {
            res.once("drain", r);
            res.once("close", r);
          });
      }
      res.end();
    } catch (e) {
      if (!res.headersSent) refuse(res, "server/internal", String(e));
      else res.destroy();
    }
  });
  // A message node cannot parse (a bad request line, a header past the limit) gets a 400 with a
  // code and the same headers as every other answer, then the connection ends.
  server.on("clientError", (e: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const [status, headers, body] =
      e.code === "HPE_HEADER_OVERFLOW"
        ? refusalHead("request/headers-too-large", "the request's headers are too large")
        : refusalHead("request/malformed", "the request is not well-formed HTTP/1.1");
    headers.set("content-length", String(Buffer.byteLength(body)));
    const head = [`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ""}`];
    headers.forEach((v, k) => {
      head.push(`${k}: ${v}`);
    });
    socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const bound = (server.address() as AddressInfo).port;
      resolve({
        port: bound,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
