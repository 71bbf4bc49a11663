// The egress proxy's rules, apart from its sockets: the allow-list decision on a `host:port` as a
// client wrote it, and the reading of what a client asks for — the HTTP request head (bounded by
// MAX_HEAD_BYTES), an absolute `http://` URI, a CONNECT `host:port` target — and the printable form
// of a host for the record.
import type net from "node:net";
import {
  canonicalHost,
  type NetworkPolicy,
  type NetworkTarget,
  parsePort,
} from "../../core/taskpack/network.js";

/** The longest request head (request line, headers and the blank line ending them) read. */
export const MAX_HEAD_BYTES = 64 * 1024;

export interface Decision {
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

/**
 * A host as a client wrote it, safe to record and print: at most 255 characters, anything but
 * printable ASCII written `\xHH` (a terminal showing the live view never gets a control byte).
 */
export function printable(raw: string): string {
  return raw
    .slice(0, 255)
    .replace(/[^\x21-\x7e]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

export interface Head {
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly headers: [string, string][];
  /** Bytes after the head (a body or a tunnelled client hello). */
  readonly rest: Buffer;
}

/** Why a head was not read: malformed, past MAX_HEAD_BYTES, or the client went away first. */
export type HeadRefusal = { readonly refused: "malformed" | "too-large" | "gone" };

/**
 * The request head: at most MAX_HEAD_BYTES, its ending blank line included — exactly, however the
 * bytes are split into reads.
 */
export function readHead(client: net.Socket): Promise<Head | HeadRefusal> {
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
export function splitHostPort(target: string): { host: string; port: number } | undefined {
  const colon = target.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const host = target.slice(0, colon);
  if (host.includes(":") && !(host.startsWith("[") && host.endsWith("]"))) return undefined;
  const port = parsePort(target.slice(colon + 1));
  return port === undefined ? undefined : { host, port };
}
