// The egress proxy on its own (no sandbox): the allow-list decision, each protocol's refusals,
// request rewriting, redirects passed back never followed, and the record of every connection.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  absoluteHttp,
  decide,
  type EgressProxy,
  MAX_HEAD_BYTES,
  printable,
  type Resolver,
  startEgressProxy,
} from "../../src/adapters/sandbox/egress-proxy.js";
import type { NetworkPolicy } from "../../src/core/taskpack/network.js";

let work: string;
let server: http.Server;
let port: number;
const seenRequests: { url: string; headers: http.IncomingHttpHeaders }[] = [];
const proxies: EgressProxy[] = [];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "warrant-egress-"));
  // Heads up to the proxy's own cap reach it (Node's default limit is lower).
  server = http.createServer({ maxHeaderSize: 1 << 17 }, (q, s) => {
    seenRequests.push({ url: q.url ?? "", headers: q.headers });
    if (q.url === "/redirect") {
      s.writeHead(302, { Location: `http://127.0.0.1:${port + 1}/elsewhere` });
      s.end();
      return;
    }
    if (q.method === "POST") {
      const body: Buffer[] = [];
      q.on("data", (d: Buffer) => body.push(d));
      q.on("end", () => s.end(`posted ${Buffer.concat(body).toString()}`));
      return;
    }
    s.end(`hello ${q.url}`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(() => {
  server.close();
  rmSync(work, { recursive: true, force: true });
});
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.close();
  seenRequests.length = 0;
});

let n = 0;
async function proxyFor(
  allow: string[],
  resolve?: Resolver,
  maxConnections?: number,
): Promise<EgressProxy> {
  const policy: NetworkPolicy = {
    ...(maxConnections === undefined ? {} : { maxConnections }),
    allow: allow.map((e) => {
      const colon = e.lastIndexOf(":");
      const host = e.slice(0, colon);
      return {
        host,
        kind: /^[0-9.]+$/.test(host) ? "ipv4" : "name",
        port: Number(e.slice(colon + 1)),
      } as const;
    }),
  };
  n += 1;
  const p = await startEgressProxy(
    path.join(work, `d${n}`, "egress.sock"),
    policy,
    resolve === undefined ? {} : { resolve },
  );
  proxies.push(p);
  return p;
}

/** Send raw bytes to the proxy's socket; everything it answers until it closes. */
function talk(p: EgressProxy, ...chunks: Buffer[]): Promise<Buffer> {
  return exchange(p, chunks, false);
}

/** Send raw bytes, then end the sending side (a client that stops short); all it answers. */
function talkThenEnd(p: EgressProxy, ...chunks: Buffer[]): Promise<Buffer> {
  return exchange(p, chunks, true);
}

function exchange(p: EgressProxy, chunks: readonly Buffer[], end: boolean): Promise<Buffer> {
  return new Promise((done, failed) => {
    const s = net.connect(p.socketPath);
    const got: Buffer[] = [];
    s.on("data", (d: Buffer) => got.push(d));
    s.on("error", failed);
    s.on("close", () => done(Buffer.concat(got)));
    s.on("connect", async () => {
      for (const c of chunks) {
        s.write(c);
        // Each chunk is its own read on the other side.
        await new Promise((r) => setTimeout(r, 20));
      }
      if (end) s.end();
    });
  });
}

/** An open CONNECT tunnel (answered 200), to hold a connection. */
function tunnel(p: EgressProxy, to: number): Promise<net.Socket> {
  return new Promise((done, failed) => {
    const s = net.connect(p.socketPath);
    s.on("error", failed);
    s.once("data", (d: Buffer) => {
      if (d.toString().startsWith("HTTP/1.1 200")) done(s);
      else failed(new Error(d.toString()));
    });
    s.on("connect", () => s.write(`CONNECT 127.0.0.1:${to} HTTP/1.1\r\n\r\n`));
  });
}

/** A GET through the proxy whose head is exactly `size` bytes, its blank line included. */
function headOf(size: number, target: string): Buffer {
  const start = `GET ${target} HTTP/1.1\r\nX-Pad: `;
  const end = "\r\nConnection: close\r\n\r\n";
  return Buffer.from(`${start}${"a".repeat(size - start.length - end.length)}${end}`);
}

const get = (target: string, extra = "") =>
  Buffer.from(`GET ${target} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`);

describe("the allow-list decision", () => {
  const policy: NetworkPolicy = {
    allow: [
      { host: "127.0.0.1", kind: "ipv4", port: 8080 },
      { host: "registry.npmjs.org", kind: "name", port: 443 },
    ],
  };
  it.each([
    ["127.0.0.1", 8080, true, undefined],
    ["[::ffff:127.0.0.1]", 8080, true, undefined],
    ["REGISTRY.npmjs.org", 443, true, undefined],
    ["127.0.0.1", 8081, false, "egress/port-not-listed"],
    ["registry.npmjs.org", 80, false, "egress/port-not-listed"],
    ["localhost", 8080, false, "egress/not-listed"],
    ["127.1", 8080, false, "egress/bad-target"],
    ["a b", 8080, false, "egress/bad-target"],
  ])("%s:%s allowed=%s (%s)", (host, p, allowed, reason) => {
    const d = decide(policy, host, p);
    expect(d.allowed).toBe(allowed);
    expect(d.reason).toBe(reason);
  });
});

describe("the allow-list decision, decided alone", () => {
  const policy: NetworkPolicy = {
    allow: [
      { host: "registry.npmjs.org", kind: "name", port: 443 },
      { host: "10.0.0.1", kind: "ipv4", port: 80 },
    ],
  };
  it("a name that extends, prefixes or contains a listed one is not listed", () => {
    for (const host of [
      "registry.npmjs.org.evil.test",
      "evilregistry.npmjs.org",
      "x.registry.npmjs.org",
      "registry.npmjs.or",
      "npmjs.org",
      "10.0.0.10",
      "10.0.0.1.evil.test",
    ])
      expect(decide(policy, host, 443), host).toEqual({
        allowed: false,
        reason: "egress/not-listed",
      });
  });
  it("names the entry it matched, by host and port together; a trailing dot is the same name", () => {
    expect(decide(policy, "registry.npmjs.org.", 443)).toEqual({
      allowed: true,
      target: { host: "registry.npmjs.org", kind: "name", port: 443 },
    });
    expect(decide(policy, "10.0.0.1", 80)).toEqual({
      allowed: true,
      target: { host: "10.0.0.1", kind: "ipv4", port: 80 },
    });
    // The port of another entry is not this host's port.
    expect(decide(policy, "10.0.0.1", 443)).toEqual({
      allowed: false,
      reason: "egress/port-not-listed",
    });
    expect(decide({ allow: [] }, "10.0.0.1", 80)).toEqual({
      allowed: false,
      reason: "egress/not-listed",
    });
  });
});

describe("an absolute http:// request target (absoluteHttp)", () => {
  it.each([
    ["http://h.test/p?q=1", { host: "h.test", port: 80, authority: "h.test", path: "/p?q=1" }],
    ["HTTP://h.test", { host: "h.test", port: 80, authority: "h.test", path: "/" }],
    ["http://h.test?q", { host: "h.test", port: 80, authority: "h.test", path: "/?q" }],
    ["http://h.test#frag", { host: "h.test", port: 80, authority: "h.test", path: "/" }],
    ["http://h.test/a#frag", { host: "h.test", port: 80, authority: "h.test", path: "/a" }],
    ["http://h.test:8080/x", { host: "h.test", port: 8080, authority: "h.test:8080", path: "/x" }],
    ["http://[::1]/x", { host: "[::1]", port: 80, authority: "[::1]", path: "/x" }],
    ["http://[::1]:81", { host: "[::1]", port: 81, authority: "[::1]:81", path: "/" }],
    ["hTtP://h.test/", { host: "h.test", port: 80, authority: "h.test", path: "/" }],
  ])("%s", (target, expected) => {
    expect(absoluteHttp(target)).toEqual(expected);
  });

  it.each([
    "https://h.test/",
    "ftp://h.test/",
    "/relative",
    "h.test:80",
    "xhttp://h.test/",
    "http:/h.test/",
    "http://user@h.test/",
    "http://user:pw@h.test:80/",
    "/x?u=http://h.test/",
  ])("%s is unsupported", (target) => {
    expect(absoluteHttp(target)).toBe("unsupported");
  });

  it.each([
    "http:///x",
    "http://",
    "http://h.test:/",
    "http://h.test:0/",
    "http://h.test:65536/",
    "http://h.test:080/",
    "http://:80/",
    "http://[::1/",
    "http://[::1:80/",
    "http://::1:80/",
    "http://[::1]x:80/",
  ])("%s has a malformed authority", (target) => {
    expect(absoluteHttp(target)).toBeUndefined();
  });
});

describe("printable hosts", () => {
  it("keeps printable ASCII, writes every other character \\xHH, and cuts at 255", () => {
    expect(printable("a-Z.0~!")).toBe("a-Z.0~!");
    expect(printable("a b\x7f\x1b\x00\u00e9")).toBe("a\\x20b\\x7f\\x1b\\x00\\xe9");
    expect(printable("x".repeat(300))).toBe("x".repeat(255));
    expect(printable(`${"x".repeat(254)}\n`)).toBe(`${"x".repeat(254)}\\x0a`);
  });
});

describe("the egress proxy", () => {
  it("forwards a plain HTTP request in origin form, without proxy headers, once", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const out = await talk(
      p,
      get(`http://127.0.0.1:${port}/a?b=1`, "Proxy-Authorization: Basic c2VjcmV0\r\n"),
    );
    expect(out.toString()).toMatch(/^HTTP\/1\.1 200/);
    expect(out.toString()).toContain("hello /a?b=1");
    expect(seenRequests[0]?.url).toBe("/a?b=1");
    expect(seenRequests[0]?.headers["proxy-authorization"]).toBeUndefined();
    expect(seenRequests[0]?.headers.connection).toBe("close");
    const [rec] = p.connections().list;
    expect(rec).toMatchObject({
      protocol: "http",
      host: "127.0.0.1",
      port,
      address: "127.0.0.1",
      "address/class": "loopback",
      allowed: true,
    });
    expect(rec?.reason).toBeUndefined();
    expect(rec?.["bytes/up"]).toBeGreaterThan(0);
    expect(rec?.["bytes/down"]).toBe(out.length);
  });

  it("passes a redirect back and never follows it", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const out = (await talk(p, get(`http://127.0.0.1:${port}/redirect`))).toString();
    expect(out).toMatch(/^HTTP\/1\.1 302/);
    expect(seenRequests.map((r) => r.url)).toEqual(["/redirect"]);
    expect(p.connections().list).toHaveLength(1);
  });

  it("refuses a port or a host not listed with 403 and the reason, and never connects", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const other = (await talk(p, get(`http://127.0.0.1:${port + 1}/`))).toString();
    expect(other).toMatch(/^HTTP\/1\.1 403/);
    expect(other).toContain("X-Warrant-Egress: egress/port-not-listed");
    const named = (
      await talk(p, Buffer.from(`CONNECT localhost:${port} HTTP/1.1\r\n\r\n`))
    ).toString();
    expect(named).toMatch(/^HTTP\/1\.1 403/);
    expect(named).toContain("egress/not-listed");
    expect(seenRequests).toHaveLength(0);
    expect(p.connections().list.map((c) => [c.protocol, c.allowed, c.reason])).toEqual([
      ["http", false, "egress/port-not-listed"],
      ["http-connect", false, "egress/not-listed"],
    ]);
  });

  it("never resolves a name that is not listed; resolves a listed one itself", async () => {
    const asked: string[] = [];
    const resolve: Resolver = async (h) => {
      asked.push(h);
      return ["127.0.0.1"];
    };
    const p = await proxyFor([`pkg.test:${port}`], resolve);
    await talk(p, get(`http://other.test:${port}/`));
    const out = (await talk(p, get(`http://pkg.test:${port}/ok`))).toString();
    expect(out).toContain("hello /ok");
    expect(asked).toEqual(["pkg.test"]);
    expect(p.connections().list[1]).toMatchObject({
      host: "pkg.test",
      address: "127.0.0.1",
      "address/class": "loopback",
      allowed: true,
    });
  });

  it("answers 502 when a listed name does not resolve or its port does not accept", async () => {
    const p = await proxyFor([`gone.test:${port}`, "127.0.0.1:1"], async () => {
      throw new Error("ENOTFOUND");
    });
    const unresolved = (await talk(p, get(`http://gone.test:${port}/`))).toString();
    expect(unresolved).toMatch(/^HTTP\/1\.1 502/);
    const refused = (await talk(p, Buffer.from("CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n"))).toString();
    expect(refused).toMatch(/^HTTP\/1\.1 502/);
    expect(p.connections().list.map((c) => [c.allowed, c.reason])).toEqual([
      [true, "egress/resolve-failed"],
      [true, "egress/connect-failed"],
    ]);
  });

  it("refuses a malformed request, an https:// absolute URI, a bad CONNECT target and an endless head", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    expect((await talk(p, Buffer.from("hello there\r\n\r\n"))).toString()).toMatch(
      /^HTTP\/1\.1 400/,
    );
    expect((await talk(p, get(`https://127.0.0.1:${port}/`))).toString()).toContain(
      "egress/unsupported",
    );
    expect((await talk(p, get("/relative"))).toString()).toContain("egress/unsupported");
    expect((await talk(p, Buffer.from("CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n"))).toString()).toContain(
      "egress/bad-target",
    );
    const endless = Buffer.from(
      `GET http://127.0.0.1:${port}/ HTTP/1.1\r\nX: ${"a".repeat(70_000)}`,
    );
    expect((await talk(p, endless)).toString()).toMatch(/^HTTP\/1\.1 431/);
    // A head cut short by the client leaving is recorded too.
    await talkThenEnd(p, Buffer.from(`GET http://127.0.0.1:${port}/ HTTP/1.1\r\nX: 1`));
    expect(seenRequests).toHaveLength(0);
    expect(p.connections().list.map((c) => c.reason)).toEqual([
      "egress/bad-request",
      "egress/unsupported",
      "egress/unsupported",
      "egress/bad-target",
      "egress/head-too-large",
      "egress/bad-request",
    ]);
  });

  it("speaks SOCKS5 CONNECT, refuses what is not listed, and refuses BIND", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const portBytes = (x: number) => Buffer.from([x >> 8, x & 0xff]);
    const ok = await talk(
      p,
      Buffer.from([5, 1, 0]),
      Buffer.concat([Buffer.from([5, 1, 0, 1, 127, 0, 0, 1]), portBytes(port)]),
      get("/socks", "Connection: close\r\n"),
    );
    expect(ok.subarray(0, 4)).toEqual(Buffer.from([5, 0, 5, 0]));
    expect(ok.toString()).toContain("hello /socks");
    const name = Buffer.from("localhost");
    const denied = await talk(
      p,
      Buffer.from([5, 1, 0]),
      Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, portBytes(port)]),
    );
    expect([...denied.subarray(0, 4)]).toEqual([5, 0, 5, 2]);
    const bind = await talk(
      p,
      Buffer.from([5, 1, 0]),
      Buffer.concat([Buffer.from([5, 2, 0, 1, 127, 0, 0, 1]), portBytes(port)]),
    );
    expect([...bind.subarray(0, 4)]).toEqual([5, 0, 5, 7]);
    // A name with a control byte is recorded escaped: nothing reaches a terminal raw.
    const hostile = Buffer.from("evil\x1b[2J.test", "latin1");
    await talk(
      p,
      Buffer.from([5, 1, 0]),
      Buffer.concat([Buffer.from([5, 1, 0, 3, hostile.length]), hostile, portBytes(port)]),
    );
    const noAuth = await talk(p, Buffer.from([5, 1, 2]));
    expect([...noAuth]).toEqual([5, 0xff]);
    expect(p.connections().list.map((c) => [c.protocol, c.host, c.allowed, c.reason])).toEqual([
      ["socks5", "127.0.0.1", true, undefined],
      ["socks5", "localhost", false, "egress/not-listed"],
      ["socks5", "127.0.0.1", false, "egress/unsupported"],
      ["socks5", "evil\\x1b[2J.test", false, "egress/bad-target"],
      ["socks5", "", false, "egress/unsupported"],
    ]);
  });

  it("records every malformed SOCKS5 attempt, however far it got", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const hello = Buffer.from([5, 1, 0]);
    const at = (...b: number[]) => Buffer.from(b);
    const portBytes = [port >> 8, port & 0xff];
    const attempts: Buffer[][] = [
      [at(5)], // the greeting cut short
      [at(5, 2, 0)], // fewer methods than it announced
      [at(5, 1, 2)], // no method without authentication
      [hello, at(5, 1, 0)], // the request cut short
      [hello, at(5, 1, 0, 9)], // an unknown address type
      [hello, at(5, 1, 0, 1, 127, 0)], // an IPv4 address cut short
      [hello, at(5, 1, 0, 3)], // a name without its length
      [hello, at(5, 1, 0, 3, 9, 0x61, 0x62)], // a name cut short
      [hello, at(5, 1, 0, 1, 127, 0, 0, 1, portBytes[0] as number)], // the port cut short
      [hello, at(5, 3, 0, 1, 127, 0, 0, 1, ...portBytes)], // UDP ASSOCIATE
      [hello, at(4, 1, 0, 1, 127, 0, 0, 1, ...portBytes)], // another version in the request
    ];
    for (const chunks of attempts) await talkThenEnd(p, ...chunks);
    const list = p.connections().list;
    expect(list).toHaveLength(attempts.length);
    expect(list.map((c) => [c.protocol, c.allowed, c.reason])).toEqual([
      ["socks5", false, "egress/bad-request"],
      ["socks5", false, "egress/bad-request"],
      ["socks5", false, "egress/unsupported"],
      ["socks5", false, "egress/bad-request"],
      ["socks5", false, "egress/bad-request"],
      ["socks5", false, "egress/bad-request"],
      ["socks5", false, "egress/bad-request"],
      ["socks5", false, "egress/bad-request"],
      ["socks5", false, "egress/bad-request"],
      ["socks5", false, "egress/unsupported"],
      ["socks5", false, "egress/unsupported"],
    ]);
    expect(list[8]?.host).toBe("127.0.0.1");
    expect(seenRequests).toHaveLength(0);
  });

  it("reads a head of exactly 64 KiB and refuses one byte more, however it is split", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const target = `http://127.0.0.1:${port}/cap`;
    const exact = headOf(MAX_HEAD_BYTES, target);
    expect(exact.length).toBe(MAX_HEAD_BYTES);
    expect((await talk(p, exact)).toString()).toMatch(/^HTTP\/1\.1 200/);
    const over = headOf(MAX_HEAD_BYTES + 1, target);
    // In one read, and with the blank line arriving in a read of its own past the cap.
    expect((await talk(p, over)).toString()).toMatch(/^HTTP\/1\.1 431/);
    const split = [over.subarray(0, MAX_HEAD_BYTES - 3), over.subarray(MAX_HEAD_BYTES - 3)];
    expect((await talk(p, ...split)).toString()).toMatch(/^HTTP\/1\.1 431/);
    expect(seenRequests.map((r) => r.url)).toEqual(["/cap"]);
    expect(p.connections().list.map((c) => [c.allowed, c.reason])).toEqual([
      [true, undefined],
      [false, "egress/head-too-large"],
      [false, "egress/head-too-large"],
    ]);
  });

  it("holds at most maxConnections at once: one past it is refused and recorded", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`], undefined, 2);
    const held = [await tunnel(p, port), await tunnel(p, port)];
    const overHttp = (await talk(p, get(`http://127.0.0.1:${port}/over`))).toString();
    expect(overHttp).toMatch(/^HTTP\/1\.1 503/);
    expect(overHttp).toContain("X-Warrant-Egress: egress/too-many-connections");
    const overSocks = await talk(p, Buffer.from([5, 1, 0]));
    expect([...overSocks]).toEqual([5, 0xff]);
    // Once one closes, the next is served.
    await new Promise<void>((r) => {
      held[0]?.on("close", () => r());
      held[0]?.destroy();
    });
    await new Promise((r) => setTimeout(r, 50));
    expect((await talk(p, get(`http://127.0.0.1:${port}/after`))).toString()).toContain(
      "hello /after",
    );
    held[1]?.destroy();
    expect(p.connections().list.map((c) => [c.protocol, c.allowed, c.reason])).toEqual([
      ["http-connect", true, undefined],
      ["http-connect", true, undefined],
      ["http", false, "egress/too-many-connections"],
      ["socks5", false, "egress/too-many-connections"],
      ["http", true, undefined],
    ]);
    expect(seenRequests.map((r) => r.url)).toEqual(["/after"]);
  });

  it("parses a plain-HTTP host by the CONNECT rule: 2130706433 and 127.1 are refused, never read as 127.0.0.1", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`, `[::1]:${port}`]);
    for (const [host, why] of [
      ["2130706433", "egress/bad-target"],
      ["0x7f.0.0.1", "egress/not-listed"],
      ["127.1", "egress/bad-target"],
      ["%31%32%37.0.0.1", "egress/bad-target"],
    ]) {
      const out = (await talk(p, get(`http://${host}:${port}/`))).toString();
      expect(out, host).toMatch(/^HTTP\/1\.1 403/);
      expect(out, host).toContain(`X-Warrant-Egress: ${why}`);
    }
    expect((await talk(p, get(`http://127.0.0.1:${port}`))).toString()).toContain("hello /");
    expect((await talk(p, get(`http://127.0.0.1:/`))).toString()).toContain("egress/bad-target");
    expect(seenRequests.map((r) => r.url)).toEqual(["/"]);
    expect(p.connections().list.map((c) => [c.host, c.allowed, c.reason])).toEqual([
      ["2130706433", false, "egress/bad-target"],
      ["0x7f.0.0.1", false, "egress/not-listed"],
      ["127.1", false, "egress/bad-target"],
      ["%31%32%37.0.0.1", false, "egress/bad-target"],
      ["127.0.0.1", true, undefined],
      ["http://127.0.0.1:/", false, "egress/bad-target"],
    ]);
  });

  it("reads a head by its rules: each malformed request line or header alone is refused", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    // A head that is only its blank line has an empty request line.
    expect((await talk(p, Buffer.from("\r\n\r\n"))).toString()).toMatch(/^HTTP\/1\.1 400/);
    // 64 KiB without the blank line cannot be a head of at most 64 KiB: refused without waiting.
    const full = Buffer.alloc(MAX_HEAD_BYTES, 0x61);
    expect((await talk(p, full)).toString()).toMatch(/^HTTP\/1\.1 431/);
    const target = `http://127.0.0.1:${port}/ok`;
    for (const head of [
      `get ${target} HTTP/1.1\r\n\r\n`,
      `GET ${target} HTTP/1.2\r\n\r\n`,
      `GET ${target} HTTP/1.1 \r\n\r\n`,
      `GET  ${target} HTTP/1.1\r\n\r\n`,
      `GET ${target} HTTP/1.1\r\nNo-Colon\r\n\r\n`,
      `GET ${target} HTTP/1.1\r\n: no name\r\n\r\n`,
      `${"A".repeat(21)} ${target} HTTP/1.1\r\n\r\n`,
    ]) {
      const out = (await talk(p, Buffer.from(head))).toString();
      expect(out, head).toMatch(/^HTTP\/1\.1 400 Bad Request/);
      expect(out, head).toContain("X-Warrant-Egress: egress/bad-request");
    }
    expect(seenRequests).toHaveLength(0);
    // Every part at its limit is well formed: HTTP/1.0 and an empty value are forwarded; a method
    // of 20 letters reaches the upstream (which answers it itself, unknown to it).
    const fine = (
      await talk(p, Buffer.from(`GET ${target} HTTP/1.0\r\nX-Empty:\r\n\r\n`))
    ).toString();
    expect(fine).toMatch(/^HTTP\/1\.1 200/);
    expect(seenRequests.map((r) => r.url)).toEqual(["/ok"]);
    expect(seenRequests[0]?.headers["x-empty"]).toBe("");
    const long = (
      await talk(p, Buffer.from(`${"A".repeat(20)} ${target} HTTP/1.1\r\n\r\n`))
    ).toString();
    expect(long).toMatch(/^HTTP\/1\.1 400/);
    expect(long).not.toContain("X-Warrant-Egress");
    expect(
      p
        .connections()
        .list.slice(-2)
        .map((c) => c.allowed),
    ).toEqual([true, true]);
  });

  it("forwards the headers trimmed, without hop-by-hop ones, with Host added when missing, and the body", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const head = [
      `POST http://127.0.0.1:${port}/post HTTP/1.1`,
      "X-Trim:   v w  ",
      "X-Spaced : v",
      "Proxy-Connection: keep-alive",
      "Keep-Alive: timeout=5",
      "connection: keep-alive",
      "Content-Length: 4",
      "",
      "body",
    ].join("\r\n");
    const out = (await talk(p, Buffer.from(head))).toString();
    expect(out).toContain("posted body");
    const seen = seenRequests[0]?.headers;
    expect(seen?.["x-trim"]).toBe("v w");
    expect(seen?.["x-spaced"]).toBe("v");
    // Exactly the client's end-to-end headers, Host and Connection: nothing else is added.
    expect(Object.keys(seen ?? {}).sort()).toEqual(
      ["connection", "content-length", "host", "x-spaced", "x-trim"].sort(),
    );
    expect(seen?.["proxy-connection"]).toBeUndefined();
    expect(seen?.["keep-alive"]).toBeUndefined();
    expect(seen?.connection).toBe("close");
    expect(seen?.host).toBe(`127.0.0.1:${port}`);
    // A Host the client sent, in any case, is kept as it is.
    await talk(p, Buffer.from(`GET http://127.0.0.1:${port}/h HTTP/1.1\r\nhOST: mine\r\n\r\n`));
    expect(seenRequests[1]?.headers.host).toBe("mine");
  });

  it("CONNECT: bytes sent with the head go through the tunnel; each malformed target alone is refused", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const out = (
      await talk(
        p,
        Buffer.from(
          `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\nGET /tun HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        ),
      )
    ).toString();
    expect(out).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\n/);
    expect(out).toContain("hello /tun");
    for (const target of [
      `:${port}`,
      `::1:${port}`,
      `[::1:${port}`,
      `::1]:${port}`,
      "127.0.0.1:0",
      "127.0.0.1:65536",
      "127.0.0.1:",
      "127.0.0.1",
    ]) {
      const refused = (await talk(p, Buffer.from(`CONNECT ${target} HTTP/1.1\r\n\r\n`))).toString();
      expect(refused, target).toMatch(/^HTTP\/1\.1 400/);
      expect(refused, target).toContain("X-Warrant-Egress: egress/bad-target");
    }
    expect(
      p
        .connections()
        .list.map((c) => [c.protocol, c.host, c.reason])
        .slice(1, 3),
    ).toEqual([
      ["http-connect", `:${port}`, "egress/bad-target"],
      ["http-connect", `::1:${port}`, "egress/bad-target"],
    ]);
  });

  it("SOCKS5: an IPv6 address, methods offered among others, and the reply code for each outcome", async () => {
    const p = await proxyFor(
      [`127.0.0.1:${port}`, `gone.test:${port}`, "127.0.0.1:1"],
      async () => {
        throw new Error("ENOTFOUND");
      },
    );
    const portBytes = (x: number) => [x >> 8, x & 0xff];
    const v6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xab, 0xcd];
    const req = (atyp: number, addr: number[], to: number) =>
      Buffer.from([5, 1, 0, atyp, ...addr, ...portBytes(to)]);
    const name = (n: string) => [n.length, ...Buffer.from(n)];
    // No-authentication offered third of three is taken; an IPv6 target not listed is refused (2).
    const refused = await talk(p, Buffer.from([5, 3, 2, 1, 0]), req(4, v6, port));
    expect([...refused.subarray(0, 4)]).toEqual([5, 0, 5, 2]);
    // A listed name that does not resolve: 4; a listed address whose port does not accept: 5.
    const unresolved = await talk(p, Buffer.from([5, 1, 0]), req(3, name("gone.test"), port));
    expect([...unresolved.subarray(0, 4)]).toEqual([5, 0, 5, 4]);
    const closed = await talk(p, Buffer.from([5, 1, 0]), req(1, [127, 0, 0, 1], 1));
    expect([...closed.subarray(0, 4)]).toEqual([5, 0, 5, 5]);
    // No method offered at all: refused like one without no-authentication.
    expect([...(await talk(p, Buffer.from([5, 0])))]).toEqual([5, 0xff]);
    expect(p.connections().list.map((c) => [c.host, c.port, c.allowed, c.reason])).toEqual([
      ["2001:db8:0:0:0:0:0:abcd", port, false, "egress/not-listed"],
      ["gone.test", port, true, "egress/resolve-failed"],
      ["127.0.0.1", 1, true, "egress/connect-failed"],
      ["", 0, false, "egress/unsupported"],
    ]);
  });

  it("close cuts open tunnels and removes the socket", async () => {
    const p = await proxyFor([`127.0.0.1:${port}`]);
    const s = net.connect(p.socketPath);
    const closed = new Promise<void>((r) => s.on("close", () => r()));
    s.on("error", () => undefined);
    s.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
    await new Promise<void>((r) => s.once("data", () => r()));
    await p.close();
    await closed;
    expect(existsSync(p.socketPath)).toBe(false);
    proxies.splice(proxies.indexOf(p), 1);
  });
});
