// The egress proxy on its own (no sandbox): the allow-list decision, each protocol's refusals,
// request rewriting, redirects passed back never followed, and the record of every connection.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  decide,
  type EgressProxy,
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
  server = http.createServer((q, s) => {
    seenRequests.push({ url: q.url ?? "", headers: q.headers });
    if (q.url === "/redirect") {
      s.writeHead(302, { Location: `http://127.0.0.1:${port + 1}/elsewhere` });
      s.end();
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
async function proxyFor(allow: string[], resolve?: Resolver): Promise<EgressProxy> {
  const policy: NetworkPolicy = {
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
  return new Promise((done, failed) => {
    const s = net.connect(p.socketPath);
    const got: Buffer[] = [];
    s.on("data", (d: Buffer) => got.push(d));
    s.on("error", failed);
    s.on("close", () => done(Buffer.concat(got)));
    s.on("connect", () => {
      for (const c of chunks) s.write(c);
    });
  });
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
    expect((await talk(p, endless)).toString()).toMatch(/^HTTP\/1\.1 400/);
    expect(seenRequests).toHaveLength(0);
    expect(p.connections().list.map((c) => c.reason)).toEqual([
      "egress/bad-request",
      "egress/unsupported",
      "egress/unsupported",
      "egress/bad-target",
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
