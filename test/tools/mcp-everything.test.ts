// The MCP tool host against @modelcontextprotocol/server-everything, the protocol's reference
// server, over stdio and over streamable HTTP: every tool it lists is registered with its input
// schema exactly as listed, and tools are called with valid and invalid arguments.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectMcpToolHost,
  type McpServerConfig,
  type McpToolHost,
} from "../../src/adapters/tools/mcp-tool-host.js";
import { createToolRegistry, type ToolRegistry } from "../../src/core/turn/tool-registry.js";
import { validateTurn } from "../../src/core/turn/validate-turn.js";
import { everythingEntry, type HttpServer, startEverythingHttp } from "./mcp-servers.js";

interface Listed {
  readonly name: string;
  readonly inputSchema: unknown;
}

/** The tools as a plain SDK client sees them, independently of the host. */
async function listDirectly(): Promise<Listed[]> {
  const client = new Client({ name: "probe", version: "1" }, { capabilities: {} });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [everythingEntry(), "stdio"],
      stderr: "ignore",
    }),
  );
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

const setups: [string, () => Promise<{ config: McpServerConfig; server?: HttpServer }>][] = [
  [
    "stdio",
    async () => ({
      config: {
        name: "everything",
        transport: "stdio",
        command: process.execPath,
        args: [everythingEntry(), "stdio"],
      },
    }),
  ],
  [
    "streamable_http",
    async () => {
      const server = await startEverythingHttp();
      return {
        server,
        config: {
          name: "everything",
          transport: "streamable_http",
          url: `http://127.0.0.1:${server.port}/mcp`,
        },
      };
    },
  ],
];

let listed: Listed[];
beforeAll(async () => {
  listed = await listDirectly();
});

describe.each(setups)("server-everything over %s", (_kind, setup) => {
  let host: McpToolHost;
  let server: HttpServer | undefined;
  let registry: ToolRegistry;

  beforeAll(async () => {
    const s = await setup();
    server = s.server;
    const r = await connectMcpToolHost({ servers: [s.config], callTimeoutMs: 10_000 });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    host = r.value;
    const reg = createToolRegistry(host.specs());
    if (!reg.ok) throw new Error(JSON.stringify(reg.errors));
    registry = reg.value;
  });

  afterAll(async () => {
    await host?.close();
    await server?.stop();
  });

  it("registers every tool it lists, with its input schema", () => {
    expect(listed.length).toBeGreaterThan(5);
    for (const tool of listed) {
      const name = `everything.${tool.name}`;
      const registered = registry.get(name);
      expect(registered, name).toBeDefined();
      expect(registered?.spec.inputSchema).toEqual(tool.inputSchema);
      expect(host.origin(name)).toEqual({ server: "everything", tool: tool.name });
    }
    expect(host.specs()).toHaveLength(listed.length);
  });

  it("calls echo and get-sum with valid arguments", async () => {
    expect(await host.call("everything.echo", { message: "hi" })).toEqual({
      ok: true,
      isError: false,
      content: "Echo: hi",
    });
    expect((await host.call("everything.get-sum", { a: 2, b: 3 })).content).toBe(
      "The sum of 2 and 3 is 5.",
    );
  });

  it("calls a tool with an output schema and one that answers with an image", async () => {
    const weather = await host.call("everything.get-structured-content", { location: "Chicago" });
    expect(weather.ok && !weather.isError).toBe(true);
    expect(weather.content).toContain("temperature");
    const image = await host.call("everything.get-tiny-image", {});
    expect(image.ok).toBe(true);
    expect(image.content).toMatch(/\[image image\/png, \d+ bytes\]/);
  });

  it("passes the server's own refusal of invalid arguments through as a tool error", async () => {
    const r = await host.call("everything.get-sum", { a: "two" });
    expect(r.ok).toBe(true);
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/invalid/i);
  });

  it("refuses invalid arguments before any call, from the registered schema", () => {
    const turn = (name: string, args: unknown) => ({
      kind: "tool_calls",
      summary: "",
      tool_calls: [{ name, arguments_json: JSON.stringify(args) }],
      message: null,
    });
    expect(validateTurn(turn("everything.get-sum", { a: 1, b: 2 }), { registry }).ok).toBe(true);
    const bad = validateTurn(turn("everything.get-sum", { a: "two" }), { registry });
    expect(
      bad.ok ? [] : bad.errors.map((e) => [e.code, e.detail?.instancePath, e.detail?.keyword]),
    ).toEqual(
      expect.arrayContaining([
        ["turn/arguments-invalid", "/a", "type"],
        ["turn/arguments-invalid", "", "required"],
      ]),
    );
    const enumBad = validateTurn(turn("everything.get-structured-content", { location: "Paris" }), {
      registry,
    });
    expect(enumBad.ok ? [] : enumBad.errors.map((e) => e.detail?.keyword)).toEqual(["enum"]);
  });
});
