// The console's three gates, each decided alone, on the handler without a socket (memory store):
// the Host (auth/foreign-host), the bearer token (auth/token-required) and, for a request that
// changes state, the Origin (auth/foreign-origin). Each refused request below passes every gate
// before the one under test; each admitted one reaches the API (answered by a route's own refusal
// or result), so the gate is shown open.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWarrant, type Warrant } from "../../src/library/create-warrant.js";
import { consoleHosts, normalizeHost, parseAllowHost } from "../../src/server/allowed-hosts.js";
import { type ConsoleHandler, createConsoleHandler } from "../../src/server/console-handler.js";

const TOKEN = "t0ken-of-the-console";
const HOST = "127.0.0.1:4180";
const ORIGIN = `http://${HOST}`;

let warrant: Warrant;
let handler: ConsoleHandler;

beforeAll(async () => {
  warrant = await createWarrant({ store: "memory:", sandbox: "none", signer: "none" });
  handler = createConsoleHandler({ warrant, token: TOKEN, origins: [ORIGIN], hosts: [HOST] });
});
afterAll(async () => {
  await handler.close();
  await warrant.close();
});

function call(
  method: string,
  url: string,
  headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` },
  body?: unknown,
): Promise<Response> {
  return handler.fetch(
    new Request(url, {
      method,
      headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
}

async function code(r: Response): Promise<unknown> {
  return ((await r.json()) as { code?: unknown }).code;
}

describe("the Host gate", () => {
  it("the console's own Host with the token reaches the API", async () => {
    const r = await call("GET", `${ORIGIN}/api/loops`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual([]);
  });

  it("a Host that only starts with the console's (a longer port, a longer name): auth/foreign-host", async () => {
    for (const url of [
      "http://127.0.0.1:41800/api/loops",
      "http://127.0.0.1.evil.example:4180/api/loops",
      "http://127.0.0.10:4180/api/loops",
      "http://127.0.0.1:418/api/loops",
    ]) {
      const r = await call("GET", url);
      expect(r.status, url).toBe(403);
      expect(await code(r), url).toBe("auth/foreign-host");
    }
  });

  it("a foreign Host is refused before the token is looked at, and for the UI too", async () => {
    const r = await call("GET", "http://rebind.example:4180/api/loops", {});
    expect(r.status).toBe(403);
    expect(await code(r)).toBe("auth/foreign-host");
    const page = await call("GET", "http://rebind.example:4180/", {});
    expect(page.status).toBe(403);
  });

  it("hosts are compared as the URL parser writes them: an upper-case allowed name matches", async () => {
    const h = createConsoleHandler({
      warrant,
      token: TOKEN,
      origins: [],
      hosts: ["LOCALHOST:4180"],
    });
    try {
      const r = await h.fetch(
        new Request("http://localhost:4180/api/loops", {
          headers: { authorization: `Bearer ${TOKEN}` },
        }),
      );
      expect(r.status).toBe(200);
    } finally {
      await h.close();
    }
  });
});

describe("the token gate", () => {
  it("no Authorization, another scheme, the token with a byte more or less: 401 auth/token-required", async () => {
    for (const authorization of [
      undefined,
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN} extra`,
      "Bearer ",
      `xBearer ${TOKEN}`,
    ]) {
      const r = await call(
        "GET",
        `${ORIGIN}/api/loops`,
        authorization === undefined ? {} : { authorization },
      );
      expect(r.status, authorization).toBe(401);
      expect(r.headers.get("www-authenticate"), authorization).toBe('Bearer realm="warrant"');
      expect(await r.json(), authorization).toMatchObject({
        ok: false,
        code: "auth/token-required",
      });
    }
  });

  it("the scheme in any case and several spaces before the token are accepted", async () => {
    for (const authorization of [`bearer ${TOKEN}`, `BEARER ${TOKEN}`, `Bearer   ${TOKEN}`]) {
      const r = await call("GET", `${ORIGIN}/api/loops`, { authorization });
      expect(r.status, authorization).toBe(200);
    }
  });

  it("with operators' tokens, a token names its operator; one given twice names the first", async () => {
    const people = createConsoleHandler({
      warrant,
      operators: [
        { name: "alice", token: "token-of-alice-0000" },
        { name: "bob", token: "token-of-bob-000000" },
        { name: "carol", token: "token-of-alice-0000" },
      ],
      origins: [ORIGIN],
      hosts: [HOST],
    });
    try {
      const session = async (token: string) =>
        (await (
          await people.fetch(
            new Request(`${ORIGIN}/api/session`, { headers: { authorization: `Bearer ${token}` } }),
          )
        ).json()) as { operator: string | null };
      expect(await session("token-of-alice-0000")).toEqual({ operator: "alice" });
      expect(await session("token-of-bob-000000")).toEqual({ operator: "bob" });
    } finally {
      await people.close();
    }
  });

  it("the UI's own files need no token (only /api/ does)", async () => {
    const r = await call("GET", `${ORIGIN}/index.html`, {});
    expect(r.status).not.toBe(401);
    expect(r.status).not.toBe(403);
  });

  it("outside /api/, only GET and HEAD: another method is 405 method not allowed", async () => {
    for (const method of ["POST", "PUT", "DELETE"]) {
      const r = await call(method, `${ORIGIN}/index.html`, {});
      expect(r.status, method).toBe(405);
      expect(await r.text(), method).toBe("method not allowed\n");
    }
    for (const method of ["GET", "HEAD"]) {
      const r = await call(method, `${ORIGIN}/index.html`, {});
      expect(r.status, method).not.toBe(405);
    }
  });

  it("a path that only looks like the API (/apix, /api without a slash) is not an API route", async () => {
    for (const p of ["/apix/loops", "/api"]) {
      const r = await call("GET", `${ORIGIN}${p}`, {});
      expect(r.status, p).not.toBe(401);
    }
  });
});

describe("the Origin gate (state-changing requests only)", () => {
  const cancel = `${ORIGIN}/api/loops/query%3Anone/cancel`;
  const auth = { authorization: `Bearer ${TOKEN}` };

  it("an origin that starts with the console's own, or differs in port or scheme: auth/foreign-origin", async () => {
    for (const origin of [
      `${ORIGIN}.evil.example`,
      `${ORIGIN}0`,
      "http://127.0.0.1:4181",
      "https://127.0.0.1:4180",
      "null",
    ]) {
      const r = await call("POST", cancel, { ...auth, origin });
      expect(r.status, origin).toBe(403);
      expect(await code(r), origin).toBe("auth/foreign-origin");
    }
  });

  it("the console's own origin, or none (not a browser), reaches the route", async () => {
    for (const headers of [{ ...auth, origin: ORIGIN }, auth]) {
      const r = await call("POST", cancel, headers);
      expect(r.status).toBe(404);
      expect(await code(r)).toBe("loop/not-opened");
    }
  });

  it("a read (GET or HEAD) from a foreign origin is not refused by the Origin gate (reads change nothing)", async () => {
    for (const method of ["GET", "HEAD"]) {
      const r = await call(method, `${ORIGIN}/api/loops`, {
        ...auth,
        origin: "http://evil.example",
      });
      expect(r.status, method).not.toBe(403);
    }
  });

  it("without the token, a foreign origin is refused by the token gate first", async () => {
    const r = await call("POST", cancel, { origin: "http://evil.example" });
    expect(r.status).toBe(401);
  });
});

describe("allowed hosts", () => {
  it("normalizeHost: as the URL parser writes a host; malformed values are undefined", () => {
    expect(normalizeHost("LocalHost:80")).toBe("localhost");
    expect(normalizeHost("127.0.0.1:4180")).toBe("127.0.0.1:4180");
    expect(normalizeHost("[::1]:4180")).toBe("[::1]:4180");
    for (const bad of ["", "a b", "user@host", "host/path", "host:99999", "a:b:c", "h?x"])
      expect(normalizeHost(bad), bad).toBeUndefined();
  });

  it("parseAllowHost: a name, a name with a port, an IPv6 address; the port at most 65535", () => {
    expect(parseAllowHost("box.lan")).toEqual({ name: "box.lan" });
    expect(parseAllowHost("box.lan:8080")).toEqual({ name: "box.lan", port: 8080 });
    expect(parseAllowHost("[::1]:65535")).toEqual({ name: "[::1]", port: 65535 });
    expect(parseAllowHost("box.lan:0")).toEqual({ name: "box.lan", port: 0 });
    // Without a port, no port field at all.
    expect(Object.keys(parseAllowHost("box.lan") ?? {})).toEqual(["name"]);
    // Of the shape NAME or [ADDRESS], but not a host the URL parser takes.
    for (const bad of ["[1]", "[1]:80", "[:::]"]) expect(parseAllowHost(bad), bad).toBeUndefined();
    for (const bad of ["box.lan:65536", "box.lan:123456", "http://box", "a b", "::1", "box:", ""])
      expect(parseAllowHost(bad), bad).toBeUndefined();
  });

  it("consoleHosts: the bound address and the loopback names it is reached through", () => {
    expect(consoleHosts("127.0.0.1", 4180)).toEqual(["127.0.0.1:4180", "localhost:4180"]);
    expect(consoleHosts("127.1.2.3", 4180)).toEqual(["127.1.2.3:4180", "localhost:4180"]);
    expect(consoleHosts("127.10.200.30", 4180)).toEqual(["127.10.200.30:4180", "localhost:4180"]);
    expect(consoleHosts("localhost", 4180)).toEqual([
      "localhost:4180",
      "127.0.0.1:4180",
      "[::1]:4180",
    ]);
    expect(consoleHosts("::1", 4180)).toEqual(["[::1]:4180", "localhost:4180"]);
    expect(consoleHosts("0.0.0.0", 4180)).toEqual([
      "0.0.0.0:4180",
      "localhost:4180",
      "127.0.0.1:4180",
    ]);
    expect(consoleHosts("::", 4180)).toEqual([
      "[::]:4180",
      "localhost:4180",
      "127.0.0.1:4180",
      "[::1]:4180",
    ]);
    // Another address is only itself; a name like a loopback address is not one.
    expect(consoleHosts("10.0.0.5", 4180)).toEqual(["10.0.0.5:4180"]);
    expect(consoleHosts("127.0.0.1.example", 4180)).toEqual(["127.0.0.1.example:4180"]);
    // An octal 0127 is not 127: no loopback name is added (the URL parser writes it 87.0.0.1).
    expect(consoleHosts("0127.0.0.1", 4180)).toEqual(["87.0.0.1:4180"]);
    // The default port is left out as the URL parser leaves it out.
    expect(consoleHosts("127.0.0.1", 80)).toEqual(["127.0.0.1", "localhost"]);
  });

  it("--allow-host names: on the console's port, or on their own; duplicates once", () => {
    expect(
      consoleHosts("127.0.0.1", 4180, [
        { name: "box.lan" },
        { name: "proxy.lan", port: 443 },
        { name: "LOCALHOST" },
      ]),
    ).toEqual(["127.0.0.1:4180", "localhost:4180", "box.lan:4180", "proxy.lan:443"]);
    // A name the URL parser does not take is left out.
    expect(consoleHosts("127.0.0.1", 4180, [{ name: "a b" }])).toEqual([
      "127.0.0.1:4180",
      "localhost:4180",
    ]);
  });
});
