// A local HTTP server (127.0.0.1, ephemeral port) that answers with recorded provider fixtures in
// order and records every request it receives (method, path, headers, body, arrival time).
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { repoRoot } from "../helpers/cli.js";

export interface WireReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export interface WireRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  readonly body: Record<string, unknown>;
  readonly at: number;
}

export interface WireServer {
  readonly url: string;
  readonly requests: WireRequest[];
  close(): Promise<void>;
}

export function fixture(name: string): WireReply {
  const file = path.join(repoRoot, "test/fixtures/wire", `${name}.json`);
  return JSON.parse(readFileSync(file, "utf8")) as WireReply;
}

/** The credential a request carried, so a fixture can echo it (`{{API_KEY}}`), as some servers do. */
function credentialOf(headers: IncomingHttpHeaders): string {
  const auth = headers.authorization;
  if (typeof auth === "string" && auth.startsWith("Bearer ")) return auth.slice(7);
  const key = headers["x-api-key"];
  return typeof key === "string" ? key : "";
}

export async function startWireServer(replies: readonly WireReply[]): Promise<WireServer> {
  const requests: WireRequest[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawBody,
        body: rawBody === "" ? {} : (JSON.parse(rawBody) as Record<string, unknown>),
        at: performance.now(),
      });
      const reply = replies[next++] ?? {
        status: 500,
        headers: { "x-should-retry": "false" },
        body: { error: { message: "the wire server has no reply left" } },
      };
      const text = JSON.stringify(reply.body).replaceAll("{{API_KEY}}", credentialOf(req.headers));
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e === undefined ? resolve() : reject(e)));
      }),
  };
}
