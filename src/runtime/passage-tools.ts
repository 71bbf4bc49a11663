// The observation tools of passages (SPEC §3): workspace reads of the pack's baseline, plus the MCP
// tools the agent definition declares, named `<server>.<tool>`. MCP servers are connected on an
// agent's first passage, reused by its later ones, and closed by close(); the MCP SDK is loaded
// only when a definition declares a server.
import path from "node:path";
import type {
  McpServerConfig,
  McpToolHost,
  McpToolHostOptions,
} from "../adapters/tools/mcp-tool-host.js";
import { fail, ok, type Problem, type Result } from "../core/result.js";
import { createCompositeToolHost, type ToolHost } from "../core/turn/tool-host.js";
import type { ToolsForPassage } from "./agent-passages.js";
import type { PassageRequest } from "./ports.js";

export interface PassageToolsOptions {
  /** The workspace tools over a baseline folder (one host per folder is made). */
  readonly workspace: (root: string) => ToolHost;
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
 * Tools per passage: an agent without MCP servers gets its baseline's workspace host; one with
 * servers gets a composite of that host and its MCP host, one per (baseline, agent definition),
 * the same object for every passage so its registry compiles once. A server that cannot be reached
 * (or a tool name taken twice) refuses the passage's tools with the MCP host's `tool/…` problem; the
 * failed connection is not kept, so a later passage tries again. Stdio servers start in the folder
 * of the agent definition file, so relative `args` name files beside it.
 */
export function createPassageTools(opts: PassageToolsOptions): PassageTools {
  const workspaces = new Map<string, ToolHost>();
  const connections = new Map<string, Promise<Result<Connected>>>();
  const workspaceOf = (root: string): ToolHost => {
    let host = workspaces.get(root);
    if (host === undefined) {
      host = opts.workspace(root);
      workspaces.set(root, host);
    }
    return host;
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
    const host = createCompositeToolHost([workspaceOf(request.pack.baselineDir), mcp.value]);
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
      if (servers.length === 0) return ok(workspaceOf(request.pack.baselineDir));
      const key = `${request.pack.baselineDir}\n${request.agentId}`;
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
