// The ToolHost contract (tool-host-contract.ts) on the hosts that need no containment backend:
// workspace tools, MCP over stdio with the real SDK and a server process, tools written in code with
// defineTool, and a composite of two hosts. Observation profiles run it on the real backend
// (profile-tool-host.test.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { connectMcpToolHost } from "../../src/adapters/tools/mcp-tool-host.js";
import { createWorkspaceTools } from "../../src/adapters/tools/workspace-tools.js";
import { createCompositeToolHost } from "../../src/core/ports/tool-host.js";
import { codeToolHost, defineTool } from "../../src/library/define-tool.js";
import { FIXTURE } from "./mcp-servers.js";
import { type ToolHostSubject, toolHostContract } from "./tool-host-contract.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-tool-contract-"));
  dirs.push(dir);
  writeFileSync(path.join(dir, "notes.txt"), "the slug is kebab-case\n");
  return dir;
}

const WORKSPACE: ToolHostSubject = {
  name: "workspace",
  make: async () => createWorkspaceTools({ root: workspace() }),
  good: { name: "workspace.read_file", args: { path: "notes.txt" }, answer: "kebab-case" },
  badArgs: { name: "workspace.read_file", args: { path: 3 } },
  failing: { name: "workspace.read_file", args: { path: "missing.txt" } },
};

const WORD_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["word"],
  properties: { word: { type: "string" } },
};

const MCP: ToolHostSubject = {
  name: "MCP (stdio, the SDK's client and a server process)",
  async make() {
    const r = await connectMcpToolHost({
      servers: [
        { name: "fx", transport: "stdio", command: process.execPath, args: [FIXTURE, "stdio"] },
      ],
      callTimeoutMs: 10_000,
    });
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.value;
  },
  good: { name: "fx.add", args: { a: 2, b: 3 }, answer: "5" },
  badArgs: { name: "fx.add", args: { a: "two" } },
  failing: { name: "fx.fail", args: {} },
};

const codeTools = () =>
  codeToolHost([
    defineTool({
      name: "code.echo",
      description: "Says the word back",
      inputSchema: WORD_SCHEMA,
      execute: ({ word }) => `echo ${String(word)}`,
    }),
    defineTool({
      name: "code.broken",
      description: "Always throws",
      inputSchema: { type: "object" },
      execute: () => {
        throw new Error("the lookup service is down");
      },
    }),
  ]);

const CODE: ToolHostSubject = {
  name: "code-defined (defineTool)",
  make: async () => codeTools(),
  good: { name: "code.echo", args: { word: "hi" }, answer: "echo hi" },
  badArgs: { name: "code.echo", args: { word: ["hi"] } },
  failing: { name: "code.broken", args: {} },
};

const COMPOSITE: ToolHostSubject = {
  name: "composite (workspace + code)",
  async make() {
    const r = createCompositeToolHost([createWorkspaceTools({ root: workspace() }), codeTools()]);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.value;
  },
  good: { name: "code.echo", args: { word: "hi" }, answer: "echo hi" },
  badArgs: { name: "workspace.read_file", args: { path: 3 } },
  failing: { name: "code.broken", args: {} },
};

toolHostContract([WORKSPACE, MCP, CODE, COMPOSITE]);
