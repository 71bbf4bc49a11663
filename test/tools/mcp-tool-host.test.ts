// The MCP tool host against real MCP server processes (the fixture server, written with the same
// SDK) over stdio, streamable HTTP and SSE: listing, calls, tool errors, death, time limits.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectMcpToolHost,
  type McpServerConfig,
  type McpToolHost,
} from "../../src/adapters/tools/mcp-tool-host.js";
import { createToolRegistry } from "../../src/core/turn/tool-registry.js";
import { validateTurn } from "../../src/core/turn/validate-turn.js";
import { FIXTURE, type HttpServer, startFixture } from "./mcp-servers.js";

const stdio = (name = "fx"): McpServerConfig => ({
  name,
  transport: "stdio",
  command: process.execPath,
  args: [FIXTURE, "stdio"],
});

async function connected(servers: McpServerConfig[], callTimeoutMs?: number): Promise<McpToolHost> {
  const r = await connectMcpToolHost({
    servers,
    ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }),
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
}

const transports: [string, () => Promise<{ config: McpServerConfig; server?: HttpServer }>][] = [
  ["stdio", async () => ({ config: stdio() })],
  [
    "streamable_http",
    async () => {
      const server = await startFixture("http");
      return {
        server,
        config: {
          name: "fx",
          transport: "streamable_http",
          url: `http://127.0.0.1:${server.port}/mcp`,
        },
      };
    },
  ],
  [
    "sse",
    async () => {
      const server = await startFixture("sse");
      return {
        server,
        config: { name: "fx", transport: "sse", url: `http://127.0.0.1:${server.port}/sse` },
      };
    },
  ],
];

describe.each(transports)("MCP tool host over %s", (_kind, start) => {
  let host: McpToolHost;
  let server: HttpServer | undefined;

  beforeAll(async () => {
    const s = await start();
    server = s.server;
    host = await connected([s.config], 5_000);
  });

  afterAll(async () => {
    await host?.close();
    await server?.stop();
  });

  it("lists every tool as <server>.<tool> with its input schema", () => {
    const names = host.specs().map((s) => s.name);
    expect(names.slice(0, 4)).toEqual(["fx.add", "fx.fail", "fx.slow", "fx.die"]);
    expect(names[4]).toMatch(/^fx\.getthing-[0-9a-f]{8}$/);
    expect(host.origin(names[4] as string)).toEqual({ server: "fx", tool: "getThing" });
    const add = host.specs()[0];
    expect(add?.effect).toBe("observation");
    expect(add?.description).toBe("Add two numbers");
    expect(add?.inputSchema).toMatchObject({ required: ["a", "b"], additionalProperties: false });
    const registry = createToolRegistry(host.specs());
    expect(registry.ok).toBe(true);
  });

  it("validates turns against the servers' schemas", () => {
    const registry = createToolRegistry(host.specs());
    if (!registry.ok) throw new Error("registry");
    const turn = (args: unknown) => ({
      kind: "tool_calls",
      summary: "",
      tool_calls: [{ name: "fx.add", arguments_json: JSON.stringify(args) }],
      message: null,
    });
    expect(validateTurn(turn({ a: 1, b: 2 }), { registry: registry.value }).ok).toBe(true);
    const bad = validateTurn(turn({ a: "1" }), { registry: registry.value });
    expect(bad.ok ? [] : bad.errors.map((e) => e.code)).toContain("turn/arguments-invalid");
  });

  it("calls a tool", async () => {
    expect(await host.call("fx.add", { a: 2, b: 40 })).toEqual({
      ok: true,
      isError: false,
      content: "42",
    });
    const thing = host.specs()[4]?.name as string;
    expect((await host.call(thing, { when: "now" })).content).toBe(
      "thing at now\n[image image/png, 3 bytes]",
    );
  });

  it("passes a tool-reported error through as isError", async () => {
    expect(await host.call("fx.fail", {})).toEqual({
      ok: true,
      isError: true,
      content: "it broke",
    });
  });

  it("answers an unknown name with tool/unknown", async () => {
    expect((await host.call("fx.nope", {})).code).toBe("tool/unknown");
  });

  it("ends a call past its time limit with tool/timeout and stays usable", async () => {
    const r = await host.call("fx.slow", { ms: 3000 }, { timeoutMs: 200 });
    expect(r).toMatchObject({ ok: false, isError: true, code: "tool/timeout" });
    expect((await host.call("fx.slow", { ms: 10 })).content).toBe("slept 10");
  });

  it("applies the host's default time limit", async () => {
    const r = await connectMcpToolHost({ servers: [stdio()], callTimeoutMs: 150 });
    if (!r.ok) throw new Error("connect");
    try {
      expect((await r.value.call("fx.slow", { ms: 600 })).code).toBe("tool/timeout");
    } finally {
      await r.value.close();
    }
  });

  it("ends a cancelled call with tool/aborted", async () => {
    const ac = new AbortController();
    // Real time: the call is in flight in the MCP server's process when it is cancelled.
    setTimeout(() => ac.abort(), 100);
    const r = await host.call("fx.slow", { ms: 3000 }, { signal: ac.signal });
    expect(r.code).toBe("tool/aborted");
  });

  it("bounds the output", async () => {
    const r = await connectMcpToolHost({ servers: [stdio()], maxOutputBytes: 100 });
    if (!r.ok) throw new Error("connect");
    try {
      const big = await r.value.call("fx.big", { n: 1000 });
      expect(big.content).toBe(
        `${"x".repeat(100)}\n[truncated: 1000 bytes; the first 100 are shown]`,
      );
    } finally {
      await r.value.close();
    }
  });

  it("answers a call whose server dies mid-call with tool/server-died, then tool/server-unavailable", async () => {
    const r = await host.call("fx.die", {}, { timeoutMs: 20_000 });
    expect(r).toMatchObject({ ok: false, isError: true, code: "tool/server-died" });
    expect((await host.call("fx.add", { a: 1, b: 1 })).code).toBe("tool/server-unavailable");
  });
});
