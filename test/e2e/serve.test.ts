// `warrant serve` as a user starts it: the console URL with its token on the first stdout line, the
// API over a real socket (401 without the token), loopback by default and a warning for another
// host, usage errors for a bad port or token; over a real socket, the framing headers on every kind
// of response, the Host allow-list with --allow-host, a large body refused before it is sent, a
// malformed escape or an absolute-form target answered 400, and `authorization: bearer` accepted.
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait-for.js";
import { startServe, stopServes } from "./serve-process.js";

const dirs: string[] = [];
afterAll(() => {
  stopServes();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-serve-"));
  dirs.push(d);
  return d;
}

describe("warrant serve", () => {
  it("prints the console URL first, binds loopback, and needs the token on every API call", async () => {
    const cwd = tempDir();
    const { url, stderr, child } = await startServe([], cwd);
    const m = /^http:\/\/127\.0\.0\.1:(\d+)\/#token=([A-Za-z0-9_-]{32})$/.exec(url);
    expect(m, url).not.toBeNull();
    const base = `http://127.0.0.1:${m?.[1]}`;
    const token = m?.[2] as string;
    const none = await fetch(`${base}/api/loops`);
    expect(none.status).toBe(401);
    expect(none.headers.get("set-cookie")).toBeNull();
    const ok = await fetch(`${base}/api/loops`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([]);
    const foreign = await fetch(`${base}/api/loops/query:x/cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, origin: "http://evil.example" },
      body: "{}",
    });
    expect(foreign.status).toBe(403);
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-testid="app"');
    expect(stderr()).not.toContain("not loopback");
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("takes --token, and warns when bound to another host than loopback", async () => {
    const cwd = tempDir();
    const token = "given-token-abcdefghijklmnop";
    const { url, stderr, child } = await startServe(["--host", "0.0.0.0", "--token", token], cwd);
    expect(url).toMatch(new RegExp(`^http://0\\.0\\.0\\.0:\\d+/#token=${token}$`));
    await waitFor(() => stderr().includes("not loopback"), {
      what: "the warning",
      timeoutMs: 10_000,
    }).catch(() => undefined);
    expect(stderr()).toContain("not loopback");
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("with --json, the first line is {url, host, port, store}", async () => {
    const cwd = tempDir();
    const { url: line, child } = await startServe(["--json", "--store", "memory:"], cwd);
    const info = JSON.parse(line) as { url: string; host: string; port: number; store: string };
    expect(info).toEqual({
      url: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${info.port}/#token=`)),
      host: "127.0.0.1",
      port: expect.any(Number),
      store: "memory:",
    });
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("refuses a bad port or a short token as usage errors (exit 2)", async () => {
    const cwd = tempDir();
    const port = await runCli(["serve", "--port", "http"], { cwd });
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("--port");
    const short = await runCli(["serve", "--token", "abc"], { cwd });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("--token");
  });
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Whether the server had answered before the request's body was sent (see rawHttp). */
  readonly answeredBeforeBody: boolean;
}

/** A chunked HTTP/1.1 body, joined. */
function dechunk(raw: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const eol = raw.indexOf("\r\n", at);
    const size = Number.parseInt(raw.slice(at, eol), 16);
    if (eol < 0 || !(size > 0)) return out;
    out += raw.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/**
 * Sends `head` (a request line and headers, as given) on a fresh socket and reads the answer until
 * the server closes the connection. With `body`, the body is sent only after the answer has come
 * (a server that waits for the body first never answers, and the test times out).
 */
function rawHttp(port: number, head: string, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let data = "";
    let bodySent = false;
    let answeredBeforeBody = false;
    socket.setEncoding("latin1");
    socket.on("data", (d: string) => {
      if (data === "") answeredBeforeBody = !bodySent;
      data += d;
      if (body !== undefined && !bodySent && data.includes("\r\n\r\n")) {
        bodySent = true;
        socket.write(body, () => {});
      }
    });
    socket.on("error", (e: NodeJS.ErrnoException) => {
      // The server may close a connection whose body it will not read while we still send it.
      if (e.code !== "ECONNRESET" && e.code !== "EPIPE") reject(e);
    });
    socket.on("close", () => {
      const end = data.indexOf("\r\n\r\n");
      const lines = data.slice(0, end).split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      const raw = data.slice(end + 4);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? "")?.[1]),
        headers,
        body: headers["transfer-encoding"] === "chunked" ? dechunk(raw) : raw,
        answeredBeforeBody,
      });
    });
    socket.write(head);
  });
}

/** A request through node:http with the Host header given (fetch sets its own). */
function withHost(
  url: string,
  host: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: o.method ?? "GET", headers: { ...o.headers, host } },
      (res) => {
        let body = "";
        res.setEncoding("utf8").on("data", (d: string) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end(o.body);
  });
}

function expectFramingDenied(headers: Readonly<Record<string, unknown>>, what: string): void {
  expect(headers["x-frame-options"], what).toBe("DENY");
  const csp = String(headers["content-security-policy"] ?? "");
  expect(
    csp.split(";").map((d) => d.trim()),
    what,
  ).toContain("frame-ancestors 'none'");
}

async function served(args: readonly string[] = []) {
  const cwd = tempDir();
  const s = await startServe(["--store", `sqlite:${path.join(cwd, "ledger.db")}`, ...args], cwd);
  const m = /^http:\/\/[^/]+:(\d+)\/#token=(\S+)$/.exec(s.url);
  const port = Number(m?.[1]);
  const token = m?.[2] as string;
  return { ...s, port, token, base: `http://127.0.0.1:${port}` };
}

describe("warrant serve: headers and request checks on a real socket", () => {
  it("forbids framing on every kind of response: page, asset, API JSON, refusal, event stream, 400", async () => {
    const { base, port, token, child } = await served();
    const auth = { authorization: `Bearer ${token}` };
    for (const [what, p, init, status] of [
      ["the page", "/", {}, 200],
      ["an asset", "/app.js", {}, 200],
      ["API JSON", "/api/loops", { headers: auth }, 200],
      ["a 401", "/api/loops", {}, 401],
      ["a 404", "/api/nothing", { headers: auth }, 404],
      ["a 400", "/api/loops/%zz", { headers: auth }, 400],
    ] as const) {
      const r = await fetch(`${base}${p}`, init);
      expect(r.status, what).toBe(status);
      expectFramingDenied(Object.fromEntries(r.headers), what);
      await r.arrayBuffer();
    }
    const page = await fetch(`${base}/`);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const events = await fetch(`${base}/api/events`, { headers: auth });
    expect(events.headers.get("content-type")).toContain("text/event-stream");
    expectFramingDenied(Object.fromEntries(events.headers), "the event stream");
    await events.body?.cancel();
    // Answers the server writes itself, before any handler: an absolute-form target, a bad Host.
    const absolute = await rawHttp(
      port,
      `GET http://127.0.0.1:${port}/api/loops HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
    );
    expectFramingDenied(absolute.headers, "a 400 of the server");
    const malformed = await rawHttp(port, "NOT HTTP AT ALL\r\n\r\n");
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ ok: false, code: "request/malformed" });
    expectFramingDenied(malformed.headers, "a malformed message");
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("answers only to its bound address and loopback names; --allow-host adds one", async () => {
    const { base, port, token, child, stderr } = await served([
      "--allow-host",
      "console.test",
      "--allow-host",
      "proxy.test:8443",
    ]);
    const auth = { authorization: `Bearer ${token}` };
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `console.test:${port}`,
      "proxy.test:8443",
    ]) {
      const r = await withHost(`${base}/api/loops`, host, { headers: auth });
      expect(r.status, host).toBe(200);
    }
    for (const host of [
      `evil.example:${port}`,
      `127.0.0.1.evil.example:${port}`,
      `console.test:${port + 1}`,
      `proxy.test:${port}`,
      "localhost",
      `[::1]:${port}`,
    ]) {
      for (const p of ["/api/loops", "/"]) {
        const r = await withHost(`${base}${p}`, host, { headers: auth });
        expect(r.status, `${host} ${p}`).toBe(403);
        expect(JSON.parse(r.body), host).toMatchObject({ ok: false, code: "auth/foreign-host" });
        expectFramingDenied(r.headers, host);
      }
    }
    // A page served under an allowed name may act: its origin is the console's.
    const act = await withHost(`${base}/api/loops/query:none/cancel`, `console.test:${port}`, {
      method: "POST",
      headers: {
        ...auth,
        origin: `http://console.test:${port}`,
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(act.status).toBe(404);
    // A Host that is not a host at all, or none: 400 request/bad-host.
    for (const head of [
      `GET /api/loops HTTP/1.1\r\nHost: evil.example/x\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      `GET /api/loops HTTP/1.1\r\nHost: user@127.0.0.1:${port}\r\n\r\n`,
      "GET /api/loops HTTP/1.1\r\n\r\n",
    ]) {
      const r = await rawHttp(port, head);
      expect(r.status, head).toBe(400);
      expect(JSON.parse(r.body)).toMatchObject({ ok: false, code: "request/bad-host" });
    }
    expect(stderr()).toContain(`answering to Host 127.0.0.1:${port}, localhost:${port}`);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("binding [::1] answers to [::1] and localhost, not to 127.0.0.1", async () => {
    const cwd = tempDir();
    const s = await startServe(["--host", "::1", "--store", "memory:"], cwd).catch(() => undefined);
    // A host without IPv6 loopback cannot bind ::1: nothing to check there.
    if (s === undefined) return;
    const port = Number(/:(\d+)\/#token=/.exec(s.url)?.[1]);
    const token = /#token=(\S+)$/.exec(s.url)?.[1] as string;
    const auth = { authorization: `Bearer ${token}` };
    const base = `http://[::1]:${port}`;
    expect((await withHost(`${base}/api/loops`, `[::1]:${port}`, { headers: auth })).status).toBe(
      200,
    );
    expect(
      (await withHost(`${base}/api/loops`, `localhost:${port}`, { headers: auth })).status,
    ).toBe(200);
    expect(
      (await withHost(`${base}/api/loops`, `127.0.0.1:${port}`, { headers: auth })).status,
    ).toBe(403);
    s.child.kill("SIGTERM");
    await new Promise((r) => s.child.once("close", r));
  });

  it("refuses a large body without the token at once (401), before the body is sent", async () => {
    const { port, token, child } = await served();
    const head = (auth: string) =>
      `POST /api/approvals HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${auth}` +
      `Content-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`;
    // Not a byte of the 100 MiB body is sent until the answer is in: a server that read the body
    // before the token would never answer.
    const none = await rawHttp(port, head(""), "x".repeat(1024));
    expect(none.status).toBe(401);
    expect(none.answeredBeforeBody).toBe(true);
    expect(none.headers.connection).toBe("close");
    expect(JSON.parse(none.body)).toMatchObject({ code: "auth/token-required" });
    const wrong = await rawHttp(port, head("Authorization: Bearer wrong-token-0123456789\r\n"));
    expect(wrong.status).toBe(401);
    // With the token, the declared length is past the 1 MiB limit: 413, still without reading.
    const tooLarge = await rawHttp(port, head(`Authorization: Bearer ${token}\r\n`));
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body)).toMatchObject({ code: "request/too-large" });
    // A body under the limit is still read and acted on.
    const ok = await fetch(`http://127.0.0.1:${port}/api/loops/query:none/cancel`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(ok.status).toBe(404);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("answers a malformed %-escape and an absolute-form target with 400 and a code", async () => {
    const { port, token, child } = await served();
    const auth = `Authorization: Bearer ${token}\r\n`;
    const host = `Host: 127.0.0.1:${port}\r\n`;
    for (const target of ["/api/loops/%zz", "/api/records/%E0%A4%A", "/api/loops/%"]) {
      const r = await rawHttp(
        port,
        `GET ${target} HTTP/1.1\r\n${host}${auth}Connection: close\r\n\r\n`,
      );
      expect(r.status, target).toBe(400);
      expect(JSON.parse(r.body), target).toMatchObject({ ok: false, code: "request/bad-escape" });
    }
    for (const target of [
      `http://127.0.0.1:${port}/api/loops`,
      "http://evil.example/api/loops",
      `HTTP://127.0.0.1:${port}/`,
      "*",
    ]) {
      const r = await rawHttp(port, `GET ${target} HTTP/1.1\r\n${host}${auth}\r\n`);
      expect(r.status, target).toBe(400);
      expect(JSON.parse(r.body), target).toMatchObject({ ok: false, code: "request/bad-target" });
    }
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("takes the token with the scheme in lower case: authorization: bearer TOKEN", async () => {
    const { port, token, child } = await served();
    const r = await rawHttp(
      port,
      `GET /api/loops HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: bearer ${token}\r\nconnection: close\r\n\r\n`,
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual([]);
    child.kill("SIGTERM");
    await new Promise((r) => child.once("close", r));
  });

  it("refuses an --allow-host that is not a host name or address (usage error, exit 2)", async () => {
    const cwd = tempDir();
    for (const bad of ["evil.example/x", "user@host", "host:99999", "", "a b"]) {
      const r = await runCli(["serve", "--allow-host", bad], { cwd });
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain("--allow-host takes NAME or NAME:PORT");
    }
  });
});
