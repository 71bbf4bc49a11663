// The observation tools of passages (SPEC §3): workspace reads of the pack's baseline, the pack's
// observation command profiles run contained (`profile.<name>`, only when a sandbox backend works
// here), plus the MCP tools the agent definition declares, named `<server>.<tool>`. MCP servers are
// connected on an agent's first passage, reused by its later ones, and closed by close(); the MCP
// SDK is loaded only when a definition declares a server.
import path from "node:path";
import type {
  McpServerConfig,
  McpToolHost,
  McpToolHostOptions,
} from "../adapters/tools/mcp-tool-host.js";
import { createProfileTools } from "../adapters/tools/profile-tools.js";
import { fail, ok, type Problem, type Result } from "../core/result.js";
import type { Sandbox } from "../core/sandbox/sandbox-port.js";
import { createCompositeToolHost, type ToolHost } from "../core/turn/tool-host.js";
import type { ToolsForPassage } from "./agent-passages.js";
import type { PassageRequest } from "./ports.js";

export interface PassageToolsOptions {
  /** The workspace tools over a baseline folder (one host per folder is made). */
  readonly workspace: (root: string) => ToolHost;
  /**
   * The containment backend observation command profiles run in (a fresh environment per call).
   * Absent: the profiles are not offered, never run uncontained.
   */
  readonly sandbox?: Sandbox | undefined;
  /** Connects MCP servers (default: the official SDK's client, `connectMcpToolHost`). */
  readonly connect?: (opts: McpToolHostOptions) => Promise<Result<McpToolHost>>;
  readonly connectTimeoutMs?: number;
  readonly callTimeoutMs?: number;
}

export interface PassageTools {
  readonly toolsFor: ToolsForPassage;
  /** Ends every MCP connection and stdio server process opened so far; later passages reconnect. */
  close(): Promise<void>;
}

function serversOf(definition: unknown): readonly McpServerConfig[] {
  const servers = (definition as { mcpServers?: unknown } | undefined)?.mcpServers;
  return Array.isArray(servers) ? (servers as McpServerConfig[]) : [];
}

async function defaultConnect(opts: McpToolHostOptions): Promise<Result<McpToolHost>> {
  const { connectMcpToolHost } = await import("../adapters/tools/mcp-tool-host.js");
  return connectMcpToolHost(opts);
}

interface Connected {
  readonly host: ToolHost;
  readonly mcp: McpToolHost;
}

/**
 * Tools per passage: an agent without MCP servers gets its pack's base host (the baseline's
 * workspace reads, plus its observation profiles when a sandbox is given), one per (baseline, pack
 * digest); one with servers gets a composite of that host and its MCP host, one per (baseline, pack
 * digest, agent definition); the same object for every passage so its registry compiles once. A
 * server that cannot be reached (or a tool name taken twice, e.g. an MCP server named `profile`)
 * refuses the passage's tools with a `tool/…` problem; the failed connection is not kept, so a
 * later passage tries again. Stdio servers start in the folder of the agent definition file, so
 * relative `args` name files beside it.
 */
export function createPassageTools(opts: PassageToolsOptions): PassageTools {
  const workspaces = new Map<string, ToolHost>();
  const connections = new Map<string, Promise<Result<Connected>>>();
  const bases = new Map<string, Result<ToolHost>>();
  const workspaceOf = (root: string): ToolHost => {
    let host = workspaces.get(root);
    if (host === undefined) {
      host = opts.workspace(root);
      workspaces.set(root, host);
    }
    return host;
  };
  const packKey = (request: PassageRequest): string =>
    `${request.pack.baselineDir}\n${request.pack.digest}`;
  // Workspace reads, plus the pack's observation profiles when commands can be contained.
  const baseOf = (request: PassageRequest): Result<ToolHost> => {
    const workspace = workspaceOf(request.pack.baselineDir);
    if (opts.sandbox === undefined) return ok(workspace);
    const key = packKey(request);
    let base = bases.get(key);
    if (base === undefined) {
      const profiles = createProfileTools({
        commands: request.pack.pack.commands,
        baselineDir: request.pack.baselineDir,
        sandbox: opts.sandbox,
      });
      base = createCompositeToolHost([workspace, profiles]);
      bases.set(key, base);
    }
    return base;
  };

  const connectAgent = async (
    request: PassageRequest,
    servers: readonly McpServerConfig[],
  ): Promise<Result<Connected>> => {
    const agent = request.pack.agents[request.role];
    const connect = opts.connect ?? defaultConnect;
    const mcp = await connect({
      servers,
      ...(agent === undefined ? {} : { cwd: path.dirname(agent.path) }),
      ...(opts.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: opts.connectTimeoutMs }),
      ...(opts.callTimeoutMs === undefined ? {} : { callTimeoutMs: opts.callTimeoutMs }),
      effect: "observation",
    });
    if (!mcp.ok) return mcp;
    const base = baseOf(request);
    const host = base.ok ? createCompositeToolHost([base.value, mcp.value]) : base;
    if (!host.ok) {
      await mcp.value.close();
      return host;
    }
    return ok({ host: host.value, mcp: mcp.value });
  };

  return {
    toolsFor: async (request) => {
      const agent = request.pack.agents[request.role];
      const servers = serversOf(agent?.definition);
      if (servers.length === 0) return baseOf(request);
      const key = `${packKey(request)}\n${request.agentId}`;
      let pending = connections.get(key);
      if (pending === undefined) {
        pending = connectAgent(request, servers);
        connections.set(key, pending);
      }
      const connected = await pending;
      if (!connected.ok) {
        if (connections.get(key) === pending) connections.delete(key);
        return fail(connected.errors.map((p): Problem => p));
      }
      return ok(connected.value.host);
    },
    close: async () => {
      const open = [...connections.values()];
      connections.clear();
      await Promise.all(
        open.map(async (p) => {
          const c = await p;
          if (c.ok) await c.value.mcp.close();
        }),
      );
    },
  };
}
