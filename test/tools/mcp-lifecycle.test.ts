// The MCP tool host's life cycle: configuration and connection refusals, several servers, the
// environment a stdio server gets, and close() ending the server processes.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  connectMcpToolHost,
  type McpServerConfig,
} from "../../src/adapters/tools/mcp-tool-host.js";
import { FIXTURE, isAlive } from "./mcp-servers.js";

const stdio = (name: string): McpServerConfig => ({
  name,
  transport: "stdio",
  command: process.execPath,
  args: [FIXTURE, "stdio"],
});

/** Pids of this process's children running the fixture server (Linux /proc). */
function fixtureChildren(): number[] {
  return childrenRunning(FIXTURE);
}

/** Pids of this process's live children whose command line contains `marker` (Linux /proc). */
function childrenRunning(marker: string): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return (
          ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("MCP tool host life cycle", () => {
  it("serves the tools of several servers, each under its own name", async () => {
    const r = await connectMcpToolHost({ servers: [stdio("one"), stdio("Two Words")] });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    try {
      const names = r.value.specs().map((s) => s.name);
      expect(names).toContain("one.add");
      const two = names.find((n) => n.startsWith("two-words-") && n.endsWith(".add")) as string;
      expect(two).toMatch(/^two-words-[0-9a-f]{8}\.add$/);
      expect(r.value.origin(two)).toEqual({ server: "Two Words", tool: "add" });
      expect((await r.value.call(two, { a: 1, b: 2 })).content).toBe("3");
    } finally {
      await r.value.close();
    }
  });

  it("close() ends the stdio server processes and later calls fail cleanly", async () => {
    const before = new Set(fixtureChildren());
    const r = await connectMcpToolHost({ servers: [stdio("a"), stdio("b")] });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const started = fixtureChildren().filter((p) => !before.has(p));
    expect(started).toHaveLength(2);
    await r.value.close();
    expect(started.filter(isAlive)).toEqual([]);
    expect((await r.value.call("a.add", { a: 1, b: 1 })).code).toBe("tool/server-unavailable");
    await r.value.close();
  });

  it("gives a stdio server no secret from the environment", async () => {
    process.env.WARRANT_TEST_API_KEY = "sk-should-not-leak";
    const r = await connectMcpToolHost({ servers: [stdio("fx")] });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    try {
      expect((await r.value.call("fx.env", { name: "WARRANT_TEST_API_KEY" })).content).toBe(
        "unset",
      );
      expect((await r.value.call("fx.env", { name: "PATH" })).content).toBe("set");
    } finally {
      delete process.env.WARRANT_TEST_API_KEY;
      await r.value.close();
    }
  });

  it("refuses two servers whose tools map to the same names, and closes what it opened", async () => {
    const before = new Set(fixtureChildren());
    const r = await connectMcpToolHost({ servers: [stdio("fx"), stdio("fx")] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatchObject({ code: "tool/duplicate-name", path: "/mcpServers/1" });
    expect(fixtureChildren().filter((p) => !before.has(p) && isAlive(p))).toEqual([]);
  });

  it.each<[string, McpServerConfig]>([
    ["stdio without a command", { name: "x", transport: "stdio" }],
    ["streamable_http without a url", { name: "x", transport: "streamable_http" }],
    ["sse with a bad url", { name: "x", transport: "sse", url: "not a url" }],
    [
      "an unknown transport",
      { name: "x", transport: "websocket" as never, url: "http://127.0.0.1:1" },
    ],
  ])("refuses %s with tool/mcp-config", async (_what, config) => {
    const r = await connectMcpToolHost({ servers: [config] });
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["tool/mcp-config", "/mcpServers/0"],
    ]);
  });

  it.each<[string, McpServerConfig]>([
    [
      "a command that does not exist",
      { name: "x", transport: "stdio", command: "/nonexistent/mcp-server" },
    ],
    [
      "a server that exits at once",
      { name: "x", transport: "stdio", command: process.execPath, args: ["-e", "process.exit(1)"] },
    ],
    [
      "nothing listening (streamable HTTP)",
      { name: "x", transport: "streamable_http", url: "http://127.0.0.1:9/mcp" },
    ],
    ["nothing listening (SSE)", { name: "x", transport: "sse", url: "http://127.0.0.1:9/sse" }],
  ])("refuses %s with tool/mcp-unavailable", async (_what, config) => {
    const r = await connectMcpToolHost({ servers: [stdio("ok"), config], connectTimeoutMs: 5_000 });
    expect(r.ok ? [] : r.errors.map((e) => [e.code, e.path])).toEqual([
      ["tool/mcp-unavailable", "/mcpServers/1"],
    ]);
  });

  it("refuses a server that never completes the handshake in time, and ends its process", async () => {
    const marker = "warrant-hung-server-marker";
    const hung: McpServerConfig = {
      name: "hung",
      transport: "stdio",
      command: process.execPath,
      args: ["-e", `setInterval(() => {}, 1000); // ${marker}`],
    };
    const r = await connectMcpToolHost({ servers: [hung], connectTimeoutMs: 300 });
    expect(r.ok ? [] : r.errors.map((e) => e.code)).toEqual(["tool/mcp-unavailable"]);
    // Well inside the SDK's own 2 s grace before it signals a server that ignores closed stdin.
    await expect.poll(() => childrenRunning(marker), { timeout: 1000, interval: 50 }).toEqual([]);
  });

  it("keeps credentials in a URL out of its messages", async () => {
    const r = await connectMcpToolHost({
      servers: [
        {
          name: "x",
          transport: "streamable_http",
          url: "http://user:pw@127.0.0.1:9/mcp?token=s3cr3t",
        },
      ],
      connectTimeoutMs: 5_000,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(JSON.stringify(r.errors)).not.toMatch(/s3cr3t|pw@/);
  });
});
