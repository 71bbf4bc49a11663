// The egress proxy of one environment: a host-side server on a unix socket (bound into the
// sandbox, whose network namespace stays empty) that speaks HTTP CONNECT, plain HTTP with an
// absolute URI, and SOCKS5 CONNECT on the same socket (told apart by the first byte), and lets a
// connection through only to a `host:port` the pack's allow-list names. Names are resolved here,
// never inside the sandbox, and only when listed; a redirect is passed back to the client, never
// followed. Every connection is recorded: target, resolved address, bytes each way, decision —
// a malformed greeting or head, one past the connection cap and one that goes away mid-request
// included. At most `maxConnections` are served at once.

import { lookup } from "node:dns/promises";
import { chmod, mkdir, rm } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import type { EgressConnection, EgressProtocol } from "../../core/ports/sandbox.js";
import {
  addressClass,
  canonicalHost,
  DEFAULT_MAX_CONNECTIONS,
  type NetworkPolicy,
  type NetworkTarget,
  parsePort,
} from "../../core/taskpack/network.js";

/** The longest request head (request line, headers and the blank line ending them) read. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** How long a client has to send its request, and an upstream to accept the connection. */
const HANDSHAKE_MS = 30_000;
/** Connections recorded per environment; past this they are counted, not listed. */
export const MAX_RECORDED_CONNECTIONS = 1000;

export type Resolver = (host: string) => Promise<readonly string[]>;

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export interface EgressProxy {
  readonly socketPath: string;
  /** Every connection so far (in order of arrival; open ones with their bytes so far). */
  connections(): { readonly list: readonly EgressConnection[]; readonly omitted: number };
  /** Stop listening, cut every open connection and remove the socket. */
  close(): Promise<void>;
}

interface Decision {
  readonly allowed: boolean;
  readonly reason?: string;
  readonly target?: NetworkTarget;
}

/** Whether `host:port` (as the client wrote it) is on the list, and the entry that names it. */
export function decide(policy: NetworkPolicy, rawHost: string, port: number): Decision {
  const c = canonicalHost(rawHost);
  if (c === undefined) return { allowed: false, reason: "egress/bad-target" };
  const entry = policy.allow.find((t) => t.host === c.host && t.port === port);
  if (entry !== undefined) return { allowed: true, target: entry };
  const hostNamed = policy.allow.some((t) => t.host === c.host);
  return { allowed: false, reason: hostNamed ? "egress/port-not-listed" : "egress/not-listed" };
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export async function startEgressProxy(
  socketPath: string,
  policy: NetworkPolicy,
  opts: { readonly resolve?: Resolver } = {},
): Promise<EgressProxy> {
  const resolve = opts.resolve ?? systemResolver;
  const records: Mutable<EgressConnection>[] = [];
  let omitted = 0;
  const open = new Set<net.Socket>();
  const record = (r: Mutable<EgressConnection>): Mutable<EgressConnection> => {
    if (records.length < MAX_RECORDED_CONNECTIONS) records.push(r);
    else omitted += 1;
    return r;
  };

  /** A record of a connection refused before its target was known. */
  const refused = (protocol: EgressProtocol, reason: string): Mutable<EgressConnection> =>
    record({
      protocol,
      host: "",
      port: 0,
      allowed: false,
      reason,
      "bytes/up": 0,
      "bytes/down": 0,
    });

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
      if (overCap) refuseOverCap(client, first[0] === 0x05);
      else if (first[0] === 0x05) void socks5(client);
      else void http(client);
    });
  });

  const refuseOverCap = (client: net.Socket, socks: boolean) => {
    const why = "egress/too-many-connections";
    refused(socks ? "socks5" : "http", why);
    if (socks) {
      client.end(Buffer.from([0x05, 0xff]));
      return;
    }
    const text = `${why}: more than ${cap} connections at once\n`;
    client.end(
      `HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\nX-Warrant-Egress: ${why}\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
    );
  };

  /** Decide on `rawHost:port`, then resolve, check the address, connect; `rec` says what happened. */
  const connectTo = async (
    rec: Mutable<EgressConnection>,
    rawHost: string,
    port: number,
  ): Promise<{ upstream?: net.Socket; rec: Mutable<EgressConnection> }> => {
    const d = decide(policy, rawHost, port);
    rec.host = d.target?.host ?? printable(rawHost);
    rec.port = port;
    rec.allowed = d.allowed;
    if (d.reason === undefined) delete rec.reason;
    else rec.reason = d.reason;
    if (!d.allowed || d.target === undefined) return { rec };
    let addresses: readonly string[];
    if (d.target.kind === "name") {
      try {
        addresses = await resolve(d.target.host);
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
      const upstream = await dial(address, port);
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
  };

  const dial = (address: string, port: number): Promise<net.Socket | undefined> =>
    new Promise((done) => {
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

  /** Pipe both ways, counting; `head` is written upstream first (it counts as up). */
  const splice = (
    client: net.Socket,
    upstream: net.Socket,
    rec: Mutable<EgressConnection>,
    head?: Buffer,
  ) => {
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
  };

  /** Read exactly `n` bytes (or undefined when the client is gone). */
  const readBytes = (s: net.Socket, n: number): Promise<Buffer | undefined> =>
    new Promise((done) => {
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

  const socks5 = async (client: net.Socket) => {
    const reply = (code: number) => Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);
    // Recorded from its first byte: a greeting cut short or malformed stays `egress/bad-request`.
    const rec = refused("socks5", "egress/bad-request");
    const greeting = await readBytes(client, 2);
    if (greeting === undefined) return;
    const methods = await readBytes(client, greeting[1] as number);
    if (methods === undefined) return;
    if (!methods.includes(0x00)) {
      rec.reason = "egress/unsupported";
      client.end(Buffer.from([0x05, 0xff]));
      return;
    }
    client.write(Buffer.from([0x05, 0x00]));
    const req = await readBytes(client, 4);
    if (req === undefined) return;
    const [ver, cmd, , atyp] = req as unknown as [number, number, number, number];
    let host: string;
    if (atyp === 0x01) {
      const a = await readBytes(client, 4);
      if (a === undefined) return;
      host = [...a].join(".");
    } else if (atyp === 0x03) {
      const len = await readBytes(client, 1);
      if (len === undefined) return;
      const name = await readBytes(client, len[0] as number);
      if (name === undefined) return;
      host = name.toString("latin1");
    } else if (atyp === 0x04) {
      const a = await readBytes(client, 16);
      if (a === undefined) return;
      const words: string[] = [];
      for (let i = 0; i < 16; i += 2) words.push(a.readUInt16BE(i).toString(16));
      host = words.join(":");
    } else {
      client.end(reply(0x08));
      return;
    }
    rec.host = printable(host);
    const portBytes = await readBytes(client, 2);
    if (portBytes === undefined) return;
    const port = portBytes.readUInt16BE(0);
    rec.port = port;
    if (ver !== 0x05 || cmd !== 0x01) {
      rec.reason = "egress/unsupported";
      client.end(reply(0x07));
      return;
    }
    const { upstream } = await connectTo(rec, host, port);
    if (upstream === undefined) {
      client.end(
        reply(rec.allowed ? (rec.reason === "egress/resolve-failed" ? 0x04 : 0x05) : 0x02),
      );
      return;
    }
    client.write(reply(0x00));
    splice(client, upstream, rec);
  };

  const http = async (client: net.Socket) => {
    // Recorded from its first byte: a head cut short, malformed or too long stays refused.
    const rec = refused("http", "egress/bad-request");
    const head = await readHead(client);
    const refuse = (status: string, reason: string, text: string) => {
      client.end(
        `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\nX-Warrant-Egress: ${reason}\r\nContent-Length: ${Buffer.byteLength(text) + 1}\r\n\r\n${text}\n`,
      );
    };
    if ("refused" in head) {
      if (head.refused === "too-large") rec.reason = "egress/head-too-large";
      refuse(
        head.refused === "too-large" ? "431 Request Header Fields Too Large" : "400 Bad Request",
        rec.reason as string,
        head.refused === "too-large"
          ? `${rec.reason}: a request head is at most ${MAX_HEAD_BYTES} bytes`
          : `${rec.reason}: not a proxy request`,
      );
      return;
    }
    const { method, target, version, headers, rest } = head;
    if (method === "CONNECT") {
      rec.protocol = "http-connect";
      const hp = splitHostPort(target);
      if (hp === undefined) {
        rec.host = printable(target);
        rec.reason = "egress/bad-target";
        refuse("400 Bad Request", "egress/bad-target", `egress/bad-target: ${printable(target)}`);
        return;
      }
      const { upstream } = await connectTo(rec, hp.host, hp.port);
      if (upstream === undefined) {
        const why = rec.reason ?? "egress/connect-failed";
        const at = printable(target);
        if (rec.allowed) refuse("502 Bad Gateway", why, `${why}: ${at}`);
        else refuse("403 Forbidden", why, `${why}: ${at} is not on the allow-list`);
        return;
      }
      client.write(`HTTP/1.1 200 Connection Established\r\n\r\n`);
      splice(client, upstream, rec, rest);
      return;
    }
    const uri = absoluteHttp(target);
    if (uri === "unsupported") {
      rec.reason = "egress/unsupported";
      refuse(
        "400 Bad Request",
        "egress/unsupported",
        "egress/unsupported: plain HTTP needs an absolute http:// URI (use CONNECT for TLS)",
      );
      return;
    }
    if (uri === undefined) {
      rec.host = printable(target.slice(0, 255));
      rec.reason = "egress/bad-target";
      refuse("400 Bad Request", "egress/bad-target", `egress/bad-target: ${printable(target)}`);
      return;
    }
    const { upstream } = await connectTo(rec, uri.host, uri.port);
    if (upstream === undefined) {
      const why = rec.reason ?? "egress/connect-failed";
      const at = printable(uri.authority);
      if (rec.allowed) refuse("502 Bad Gateway", why, `${why}: ${at}`);
      else refuse("403 Forbidden", why, `${why}: ${at} is not on the allow-list`);
      return;
    }
    // The request in origin form, to this one upstream; hop-by-hop and proxy headers dropped, and
    // the connection closed after it, so a later request cannot ride it to another destination.
    const kept = headers.filter(
      ([k]) => !/^(proxy-connection|proxy-authorization|connection|keep-alive)$/i.test(k),
    );
    if (!kept.some(([k]) => k.toLowerCase() === "host")) kept.push(["Host", uri.authority]);
    kept.push(["Connection", "close"]);
    const lines = [`${method} ${uri.path} ${version}`];
    for (const [k, v] of kept) lines.push(`${k}: ${v}`);
    const out = Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), rest]);
    splice(client, upstream, rec, out);
  };

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

/**
 * A host as a client wrote it, safe to record and print: at most 255 characters, anything but
 * printable ASCII written `\xHH` (a terminal showing the live view never gets a control byte).
 */
export function printable(raw: string): string {
  return raw
    .slice(0, 255)
    .replace(/[^\x21-\x7e]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

interface Head {
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly headers: [string, string][];
  /** Bytes after the head (a body or a tunnelled client hello). */
  readonly rest: Buffer;
}

/** Why a head was not read: malformed, past MAX_HEAD_BYTES, or the client went away first. */
type HeadRefusal = { readonly refused: "malformed" | "too-large" | "gone" };

/**
 * The request head: at most MAX_HEAD_BYTES, its ending blank line included — exactly, however the
 * bytes are split into reads.
 */
function readHead(client: net.Socket): Promise<Head | HeadRefusal> {
  return new Promise((done) => {
    let buf = Buffer.alloc(0);
    const finish = (h: Head | HeadRefusal) => {
      client.off("data", onData);
      client.off("end", onGone);
      client.off("close", onGone);
      client.pause();
      done(h);
    };
    const onGone = () => finish({ refused: "gone" });
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0 ? buf.length >= MAX_HEAD_BYTES : end + 4 > MAX_HEAD_BYTES)
        return finish({ refused: "too-large" });
      if (end < 0) return;
      const text = buf.subarray(0, end).toString("latin1");
      const [line, ...rawHeaders] = text.split("\r\n");
      const m = /^([A-Z]{1,20}) (\S{1,8192}) (HTTP\/1\.[01])$/.exec(line ?? "");
      if (m === null) return finish({ refused: "malformed" });
      const headers: [string, string][] = [];
      for (const h of rawHeaders) {
        const colon = h.indexOf(":");
        if (colon <= 0) return finish({ refused: "malformed" });
        headers.push([h.slice(0, colon).trim(), h.slice(colon + 1).trim()]);
      }
      finish({
        method: m[1] as string,
        target: m[2] as string,
        version: m[3] as string,
        headers,
        rest: buf.subarray(end + 4),
      });
    };
    client.on("data", onData);
    client.on("end", onGone);
    client.on("close", onGone);
    client.resume();
  });
}

/**
 * An absolute `http://` request target: its authority split by the same rule as a CONNECT target
 * (port 80 when it has none), and the path and query to forward in origin form. `unsupported` for
 * another scheme, an origin-form target or user-info; undefined when the authority is malformed.
 */
export function absoluteHttp(
  target: string,
): { host: string; port: number; authority: string; path: string } | "unsupported" | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(target);
  if (scheme === null || (scheme[1] as string).toLowerCase() !== "http") return "unsupported";
  const rest = target.slice(scheme[0].length);
  const cut = rest.search(/[/?#]/);
  const authority = cut < 0 ? rest : rest.slice(0, cut);
  if (authority.includes("@")) return "unsupported";
  let where = cut < 0 ? "" : rest.slice(cut);
  const hash = where.indexOf("#");
  if (hash >= 0) where = where.slice(0, hash);
  const path = where.startsWith("/") ? where : `/${where}`;
  const bracketed = authority.startsWith("[");
  const hasPort = bracketed ? /\]:[^\]]*$/.test(authority) : authority.includes(":");
  if (!hasPort) {
    if (authority === "" || (bracketed && !authority.endsWith("]"))) return undefined;
    return { host: authority, port: 80, authority, path };
  }
  const hp = splitHostPort(authority);
  return hp === undefined ? undefined : { ...hp, authority, path };
}

/** `host:port` or `[v6]:port` as a CONNECT target gives it. */
function splitHostPort(target: string): { host: string; port: number } | undefined {
  const colon = target.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const host = target.slice(0, colon);
  if (host.includes(":") && !(host.startsWith("[") && host.endsWith("]"))) return undefined;
  const port = parsePort(target.slice(colon + 1));
  return port === undefined ? undefined : { host, port };
}
