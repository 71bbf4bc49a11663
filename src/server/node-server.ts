// Mounts a fetch handler on node:http: each request becomes a web Request (its body read whole, at
// most 1 MiB), each Response is streamed back; a client that goes away aborts the request's signal
// and cancels the response body (so an event stream ends).
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface MountedServer {
  readonly port: number;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

async function readBody(req: http.IncomingMessage): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function mountFetchHandler(
  handle: (request: Request) => Promise<Response>,
  host: string,
  port: number,
): Promise<MountedServer> {
  const server = http.createServer(async (req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    try {
      const method = req.method ?? "GET";
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
      }
      const hostHeader = /^[A-Za-z0-9.:[\]-]+$/.test(req.headers.host ?? "")
        ? (req.headers.host as string)
        : `${host}:${port}`;
      let body: Uint8Array | undefined;
      if (method !== "GET" && method !== "HEAD") {
        body = await readBody(req);
        if (body === undefined) {
          res.writeHead(413, { "content-type": "application/json" });
          res.end(
            `${JSON.stringify({ ok: false, code: "request/too-large", message: "the body is over 1 MiB" })}\n`,
          );
          return;
        }
      }
      const request = new Request(`http://${hostHeader}${req.url ?? "/"}`, {
        method,
        headers,
        signal: controller.signal,
        ...(body === undefined ? {} : { body }),
      });
      const response = await handle(request);
      const out: Record<string, string> = {};
      response.headers.forEach((v, k) => {
        out[k] = v;
      });
      res.writeHead(response.status, out);
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
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(`${JSON.stringify({ ok: false, code: "server/internal", message: String(e) })}\n`);
      } else res.destroy();
    }
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
