// The egress proxy of one environment: a host-side server on a unix socket (bound into the
// sandbox, whose network namespace stays empty) that speaks HTTP CONNECT, plain HTTP with an
// absolute URI, and SOCKS5 CONNECT on the same socket (told apart by the first byte), and lets a
// connection through only to a `host:port` the pack's allow-list names. Names are resolved here,
// never inside the sandbox, and only when listed; a redirect is passed back to the client, never
// followed. Every connection is recorded: target, resolved address, bytes each way, decision —
// a malformed greeting or head, one past the connection cap and one that goes away mid-request
// included. At most `maxConnections` are served at once.
//
// The pieces: egress-rules.ts (the decision and the parsing), egress-connect.ts (reaching a
// target, splicing), egress-handlers.ts (SOCKS5 and HTTP); here, the server, the cap and the record.

import { lookup } from "node:dns/promises";
import { chmod, mkdir, rm } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import type { EgressConnection, EgressProtocol } from "../../core/ports/sandbox.js";
import { DEFAULT_MAX_CONNECTIONS, type NetworkPolicy } from "../../core/taskpack/network.js";
import {
  type ConnectionRecord,
  HANDSHAKE_MS,
  type ProxyContext,
  type Resolver,
} from "./egress-connect.js";
import { http, refuseOverCap, socks5 } from "./egress-handlers.js";

export type { Resolver } from "./egress-connect.js";
export { absoluteHttp, decide, MAX_HEAD_BYTES, printable } from "./egress-rules.js";

/** Connections recorded per environment; past this they are counted, not listed. */
export const MAX_RECORDED_CONNECTIONS = 1000;

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export interface EgressProxy {
  readonly socketPath: string;
  /** Every connection so far (in order of arrival; open ones with their bytes so far). */
  connections(): { readonly list: readonly EgressConnection[]; readonly omitted: number };
  /** Stop listening, cut every open connection and remove the socket. */
  close(): Promise<void>;
}

export async function startEgressProxy(
  socketPath: string,
  policy: NetworkPolicy,
  opts: { readonly resolve?: Resolver } = {},
): Promise<EgressProxy> {
  const records: ConnectionRecord[] = [];
  let omitted = 0;
  const open = new Set<net.Socket>();
  const record = (r: ConnectionRecord): ConnectionRecord => {
    if (records.length < MAX_RECORDED_CONNECTIONS) records.push(r);
    else omitted += 1;
    return r;
  };
  const ctx: ProxyContext = {
    policy,
    resolve: opts.resolve ?? systemResolver,
    open,
    refused: (protocol: EgressProtocol, reason: string) =>
      record({
        protocol,
        host: "",
        port: 0,
        allowed: false,
        reason,
        "bytes/up": 0,
        "bytes/down": 0,
      }),
  };

  const cap = policy.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  // Clients being served, and clients past the cap waiting for their first byte to be refused
  // in their own protocol (as many again at most; past that they are closed at once, counted).
  let served = 0;
  let refusing = 0;
  const server = net.createServer((client) => {
    open.add(client);
    client.on("close", () => open.delete(client));
    client.on("error", () => client.destroy());
    client.setTimeout(HANDSHAKE_MS, () => client.destroy());
    const overCap = served >= cap;
    if (overCap && refusing >= cap) {
      omitted += 1;
      client.destroy();
      return;
    }
    if (overCap) refusing += 1;
    else served += 1;
    client.on("close", () => {
      if (overCap) refusing -= 1;
      else served -= 1;
    });
    client.once("readable", () => {
      const first = client.read(1) as Buffer | null;
      if (first === null) return;
      client.unshift(first);
      if (overCap) refuseOverCap(ctx, client, first[0] === 0x05, cap);
      else if (first[0] === 0x05) void socks5(ctx, client);
      else void http(ctx, client);
    });
  });

  await mkdir(path.dirname(socketPath), { recursive: true, mode: 0o755 });
  await rm(socketPath, { force: true });
  await new Promise<void>((done, failed) => {
    server.once("error", failed);
    server.listen(socketPath, () => {
      server.off("error", failed);
      done();
    });
  });
  // The commands run as another uid: the socket is theirs to connect to (the directories above
  // it on the host are private to the environment).
  await chmod(socketPath, 0o666);

  return {
    socketPath,
    connections: () => ({ list: records.map((r) => ({ ...r })), omitted }),
    async close() {
      await new Promise<void>((done) => {
        server.close(() => done());
        for (const s of open) s.destroy();
      });
      await rm(socketPath, { force: true });
    },
  };
}
