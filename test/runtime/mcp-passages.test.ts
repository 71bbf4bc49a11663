// Passages get the MCP tools their agent definition declares (docs/spec/turns.md): `<server>.<tool>` over the
// official SDK (stdio, the fixture server), one connection per agent definition reused across its
// passages and closed with the drive; a server that cannot be reached blocks the loop with `tool/…`.
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  connectMcpToolHost,
  type McpToolHostOptions,
} from "../../src/adapters/tools/mcp-tool-host.js";
import { accept, harness, type Payload, plan, recordsOf, reject, result, turn } from "./harness.js";

const Plan = (name: string) => turn("Plan", plan(name));
const add = (a: number, b: number): Payload => ({
  kind: "tool_calls",
  summary: "ask calc",
  tool_calls: [{ name: "calc.add", arguments_json: JSON.stringify({ a, b }) }],
  message: null,
});

/** The fixture MCP servers this process started and that still run. */
function fixtureServers(): number[] {
  let listing = "";
  try {
    listing = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], {
      encoding: "utf8",
    });
  } catch {
    return []; // ps exits 1 when there is no child at all
  }
  return listing
    .split("\n")
    .filter((l) => l.includes("server.mjs"))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

/** The official SDK's client, counting its connections. */
function countedMcp() {
  const connects: McpToolHostOptions[] = [];
  const mcp = {
    connectTimeoutMs: 10_000,
    connect: (opts: McpToolHostOptions) => {
      connects.push(opts);
      return connectMcpToolHost(opts);
    },
  };
  return { mcp, connects };
}

describe("MCP tools in passages", () => {
  it("an implementer calls calc.add, reads its answer, then plans; the transcript keeps both; the server is gone after the drive", async () => {
    const { mcp, connects } = countedMcp();
    const running: number[][] = [];
    const h = await harness(
      {
        implementer: [add(2, 3), Plan("good-fix"), add(40, 2), Plan("good-fix")],
        reviewer: [reject, accept],
        summarizer: [result],
      },
      {
        pack: "mcp.task-pack.json",
        mcp,
        onEvent: (e) => {
          if (e.kind === "fact" && e.summary.startsWith("cycle-opened"))
            running.push(fixtureServers());
        },
      },
    );
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");

    // The model read the tool's answer before it planned.
    const [first, second] = h.models.implementer ?? [];
    const fedBack = first?.requests[1]?.conversation.find((c) => c.kind === "tool-results");
    expect(fedBack).toMatchObject({
      results: [{ name: "calc.add", content: "5", isError: false }],
    });
    expect(JSON.stringify(second?.requests[1]?.conversation)).toContain('"content":"42"');

    // The transcript records the call and its result; the tool is offered under `<server>.<tool>`.
    const transcripts = (await recordsOf(h, "transcript")).map(
      (t) => t.body as { role: string; entries: { kind: string }[] },
    );
    const implementerCalls = transcripts
      .filter((t) => t.role === "implementer")
      .flatMap((t) => t.entries.filter((e) => e.kind === "tool-call"));
    expect(implementerCalls).toMatchObject([
      { name: "calc.add", args: { a: 2, b: 3 }, result: { ok: true, content: "5" } },
      { name: "calc.add", args: { a: 40, b: 2 }, result: { ok: true, content: "42" } },
    ]);
    const offered = first?.requests[0]?.tools?.map((t) => t.name) ?? [];
    expect(offered).toEqual(expect.arrayContaining(["calc.add", "calc.fail"]));

    // One connection for the agent's two passages; the reviewer (no servers) opened none.
    expect(connects).toHaveLength(1);
    expect(connects[0]?.servers.map((s) => s.name)).toEqual(["calc"]);
    expect(running).toHaveLength(2);
    expect(running[0]).toHaveLength(1);
    expect(running[1]).toEqual(running[0]);

    // The drive closed its MCP connections when it ended.
    await expect.poll(fixtureServers, { timeout: 5_000 }).toEqual([]);
  });

  it("a tool that reports an error is a result the model reads, not a passage failure: the loop goes on", async () => {
    const { mcp } = countedMcp();
    const failing: Payload = {
      kind: "tool_calls",
      summary: "try fail",
      tool_calls: [{ name: "calc.fail", arguments_json: "{}" }],
      message: null,
    };
    const h = await harness(
      { implementer: [failing, Plan("good-fix")], reviewer: [accept], summarizer: [result] },
      { pack: "mcp.task-pack.json", mcp },
    );
    const r = await h.drive();
    expect(r.document.stop?.reason).toBe("succeeded");
    const fedBack = h.models.implementer?.[0]?.requests[1]?.conversation.find(
      (c) => c.kind === "tool-results",
    );
    expect(fedBack).toMatchObject({
      results: [{ name: "calc.fail", content: "it broke", isError: true }],
    });
  });

  it("an MCP server that cannot be reached fails the passage with tool/mcp-unavailable and blocks the loop after one charge", async () => {
    const { mcp, connects } = countedMcp();
    const h = await harness(
      { implementer: [Plan("good-fix"), Plan("good-fix")] },
      { pack: "mcp-unreachable.task-pack.json", mcp },
    );
    const r = await h.drive();
    expect(r.status).toBe("blocked");
    if (r.status === "blocked") {
      expect(r.reason).toBe("tool");
      expect(r.detail).toContain("tool/mcp-unavailable");
      expect(r.detail).toContain("MCP server calc (stdio) could not be reached");
    }
    expect(r.document.spent.passages).toBe(1);
    expect(connects).toHaveLength(1);
    // The model was never asked; the failure is recorded as the passage's end.
    expect(h.models.implementer ?? []).toHaveLength(0);
    const [end] = await recordsOf(h, "passageEnd");
    expect(end?.body).toMatchObject({
      role: "implementer",
      "model/calls": 0,
      failure: { code: "tool/mcp-unavailable" },
    });
    expect(fixtureServers()).toEqual([]);

    // Resumed once the server is fixed (here: still broken), it tries again and blocks again.
    const again = await h.drive();
    expect(again.status).toBe("blocked");
    expect(again.document.spent.passages).toBe(2);
    expect(connects).toHaveLength(2);
  });
});
