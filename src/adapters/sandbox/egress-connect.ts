// The egress proxy's socket plumbing, shared by its protocols: what a connection is handled with
// (the policy, the resolver, the open sockets, the record), reaching a target once the client has
// named it (decide, resolve only a listed name, dial each address), splicing client and upstream
// while counting bytes each way, and reading exact byte counts off a client.
import net from "node:net";
import type { EgressConnection, EgressProtocol } from "../../core/ports/sandbox.js";
import { addressClass, type NetworkPolicy } from "../../core/taskpack/network.js";
import { decide, printable } from "./egress-rules.js";

/** How long a client has to send its request, and an upstream to accept the connection. */
export const HANDSHAKE_MS = 30_000;

export type Resolver = (host: string) => Promise<readonly string[]>;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One connection's record, updated as the connection goes. */
export type ConnectionRecord = Mutable<EgressConnection>;

/** What every connection of one proxy is handled with. */
export interface ProxyContext {
  readonly policy: NetworkPolicy;
  readonly resolve: Resolver;
  /** Every socket open (clients and upstreams), cut when the proxy closes. */
  readonly open: Set<net.Socket>;
  /** A record of a connection refused before its target was known (updated once it is). */
  refused(protocol: EgressProtocol, reason: string): ConnectionRecord;
}

/** Decide on `rawHost:port`, then resolve, check the address, connect; `rec` says what happened. */
export async function connectTo(
  ctx: ProxyContext,
  rec: ConnectionRecord,
  rawHost: string,
  port: number,
): Promise<{ upstream?: net.Socket; rec: ConnectionRecord }> {
  const d = decide(ctx.policy, rawHost, port);
  rec.host = d.target?.host ?? printable(rawHost);
  rec.port = port;
  rec.allowed = d.allowed;
  if (d.reason === undefined) delete rec.reason;
  else rec.reason = d.reason;
  if (!d.allowed || d.target === undefined) return { rec };
  let addresses: readonly string[];
  if (d.target.kind === "name") {
    try {
      addresses = await ctx.resolve(d.target.host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) {
      rec.reason = "egress/resolve-failed";
      return { rec };
    }
  } else addresses = [d.target.host];
  // Any address is reachable here only because the pack names this host:port itself (the IP
  // literal, or the name it resolved); a name that is not listed is never even resolved.
  for (const address of addresses) {
    const upstream = await dial(ctx.open, address, port);
    if (upstream !== undefined) {
      rec.address = address;
      rec["address/class"] = addressClass(address);
      return { upstream, rec };
    }
  }
  rec.address = addresses[0] as string;
  rec["address/class"] = addressClass(addresses[0] as string);
  rec.reason = "egress/connect-failed";
  return { rec };
}

/** A connection to `address:port` (added to `open` while it is), or undefined when it fails. */
function dial(
  open: Set<net.Socket>,
  address: string,
  port: number,
): Promise<net.Socket | undefined> {
  return new Promise((done) => {
    const s = net.connect({ host: address, port });
    const timer = setTimeout(() => s.destroy(), HANDSHAKE_MS);
    s.once("connect", () => {
      clearTimeout(timer);
      s.removeAllListeners("error");
      open.add(s);
      s.on("close", () => open.delete(s));
      done(s);
    });
    s.once("error", () => {
      clearTimeout(timer);
      done(undefined);
    });
    s.once("close", () => done(undefined));
  });
}

/** Pipe both ways, counting; `head` is written upstream first (it counts as up). */
export function splice(
  client: net.Socket,
  upstream: net.Socket,
  rec: ConnectionRecord,
  head?: Buffer,
): void {
  client.setTimeout(0);
  if (client.destroyed) {
    // The client went away while the target was resolved and dialled.
    upstream.destroy();
    return;
  }
  const cut = () => {
    client.destroy();
    upstream.destroy();
  };
  upstream.on("error", cut);
  client.on("error", cut);
  upstream.on("close", () => client.end());
  client.on("close", () => upstream.destroy());
  if (head !== undefined && head.length > 0) {
    rec["bytes/up"] += head.length;
    upstream.write(head);
  }
  client.on("data", (chunk: Buffer) => {
    rec["bytes/up"] += chunk.length;
    if (!upstream.write(chunk)) client.pause();
  });
  upstream.on("drain", () => client.resume());
  upstream.on("data", (chunk: Buffer) => {
    rec["bytes/down"] += chunk.length;
    if (!client.write(chunk)) upstream.pause();
  });
  client.on("drain", () => upstream.resume());
  client.on("end", () => upstream.end());
  upstream.on("end", () => client.end());
  client.resume();
}

/** Read exactly `n` bytes (or undefined when the client is gone). */
export function readBytes(s: net.Socket, n: number): Promise<Buffer | undefined> {
  return new Promise((done) => {
    if (n === 0) {
      done(Buffer.alloc(0));
      return;
    }
    const attempt = () => {
      const b = s.read(n) as Buffer | null;
      if (b !== null) {
        cleanup();
        done(b.length === n ? b : undefined);
      }
    };
    const gone = () => {
      cleanup();
      done(undefined);
    };
    const cleanup = () => {
      s.off("readable", attempt);
      s.off("close", gone);
      s.off("end", gone);
    };
    s.on("readable", attempt);
    s.on("close", gone);
    s.on("end", gone);
    attempt();
  });
}
