// The egress proxy's protocols, one handler each, on a client whose first byte told them apart:
// SOCKS5 CONNECT (a greeting offering no authentication, then one request), HTTP CONNECT and
// plain HTTP with an absolute `http://` URI (rewritten to origin form, the connection closed after
// it). Each records the connection from its first byte, refuses in its own protocol, and splices
// client and upstream once the target is reached. A client past the connection cap is refused in
// its protocol too.
import type net from "node:net";
import {
  type ConnectionRecord,
  connectTo,
  type ProxyContext,
  readBytes,
  splice,
} from "./egress-connect.js";
import {
  absoluteHttp,
  MAX_HEAD_BYTES,
  printable,
  readHead,
  splitHostPort,
} from "./egress-rules.js";

/** Refuse a client past the cap of `cap` connections at once, in its own protocol. */
export function refuseOverCap(
  ctx: ProxyContext,
  client: net.Socket,
  socks: boolean,
  cap: number,
): void {
  const why = "egress/too-many-connections";
  ctx.refused(socks ? "socks5" : "http", why);
  if (socks) {
    client.end(Buffer.from([0x05, 0xff]));
    return;
  }
  const text = `${why}: more than ${cap} connections at once\n`;
  client.end(
    `HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\nX-Warrant-Egress: ${why}\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
}

/** A SOCKS5 reply with `code` and an empty IPv4 bound address. */
const socksReply = (code: number) => Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);

/** The host of a SOCKS5 request of address type `atyp`, read off the client; undefined if gone. */
async function socksHost(
  client: net.Socket,
  atyp: number | undefined,
): Promise<string | "bad-type" | undefined> {
  if (atyp === 0x01) {
    const a = await readBytes(client, 4);
    if (a === undefined) return undefined;
    return [...a].join(".");
  }
  if (atyp === 0x03) {
    const len = await readBytes(client, 1);
    if (len === undefined) return undefined;
    const name = await readBytes(client, len[0] as number);
    if (name === undefined) return undefined;
    return name.toString("latin1");
  }
  if (atyp === 0x04) {
    const a = await readBytes(client, 16);
    if (a === undefined) return undefined;
    const words: string[] = [];
    for (let i = 0; i < 16; i += 2) words.push(a.readUInt16BE(i).toString(16));
    return words.join(":");
  }
  return "bad-type";
}

export async function socks5(ctx: ProxyContext, client: net.Socket): Promise<void> {
  // Recorded from its first byte: a greeting cut short or malformed stays `egress/bad-request`.
  const rec = ctx.refused("socks5", "egress/bad-request");
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
  const [ver, cmd, , atyp] = req;
  const host = await socksHost(client, atyp);
  if (host === undefined) return;
  if (host === "bad-type") {
    client.end(socksReply(0x08));
    return;
  }
  rec.host = printable(host);
  const portBytes = await readBytes(client, 2);
  if (portBytes === undefined) return;
  const port = portBytes.readUInt16BE(0);
  rec.port = port;
  if (ver !== 0x05 || cmd !== 0x01) {
    rec.reason = "egress/unsupported";
    client.end(socksReply(0x07));
    return;
  }
  const { upstream } = await connectTo(ctx, rec, host, port);
  if (upstream === undefined) {
    client.end(
      socksReply(rec.allowed ? (rec.reason === "egress/resolve-failed" ? 0x04 : 0x05) : 0x02),
    );
    return;
  }
  client.write(socksReply(0x00));
  splice(client, upstream, rec);
}

/** End `client` with a plain-text HTTP refusal that names `reason` in X-Warrant-Egress. */
function refuseHttp(client: net.Socket, status: string, reason: string, text: string): void {
  client.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nConnection: close\r\nX-Warrant-Egress: ${reason}\r\nContent-Length: ${Buffer.byteLength(text) + 1}\r\n\r\n${text}\n`,
  );
}

/** Refuse a target `at` that was not reached: not listed (403), or listed and failed (502). */
function refuseUnreached(client: net.Socket, rec: ConnectionRecord, at: string): void {
  const why = rec.reason ?? "egress/connect-failed";
  if (rec.allowed) refuseHttp(client, "502 Bad Gateway", why, `${why}: ${at}`);
  else refuseHttp(client, "403 Forbidden", why, `${why}: ${at} is not on the allow-list`);
}

export async function http(ctx: ProxyContext, client: net.Socket): Promise<void> {
  // Recorded from its first byte: a head cut short, malformed or too long stays refused.
  const rec = ctx.refused("http", "egress/bad-request");
  const head = await readHead(client);
  if ("refused" in head) {
    if (head.refused === "too-large") rec.reason = "egress/head-too-large";
    refuseHttp(
      client,
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
      refuseHttp(
        client,
        "400 Bad Request",
        "egress/bad-target",
        `egress/bad-target: ${printable(target)}`,
      );
      return;
    }
    const { upstream } = await connectTo(ctx, rec, hp.host, hp.port);
    if (upstream === undefined) {
      refuseUnreached(client, rec, printable(target));
      return;
    }
    client.write(`HTTP/1.1 200 Connection Established\r\n\r\n`);
    splice(client, upstream, rec, rest);
    return;
  }
  const uri = absoluteHttp(target);
  if (uri === "unsupported") {
    rec.reason = "egress/unsupported";
    refuseHttp(
      client,
      "400 Bad Request",
      "egress/unsupported",
      "egress/unsupported: plain HTTP needs an absolute http:// URI (use CONNECT for TLS)",
    );
    return;
  }
  if (uri === undefined) {
    rec.host = printable(target.slice(0, 255));
    rec.reason = "egress/bad-target";
    refuseHttp(
      client,
      "400 Bad Request",
      "egress/bad-target",
      `egress/bad-target: ${printable(target)}`,
    );
    return;
  }
  const { upstream } = await connectTo(ctx, rec, uri.host, uri.port);
  if (upstream === undefined) {
    refuseUnreached(client, rec, printable(uri.authority));
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
}
