// The observation tools of passages (docs/spec/turns.md): workspace reads of the pack's baseline, the pack's
// observation command profiles run contained (`profile.<name>`, only when a sandbox backend works
// here), tools written in code, plus the MCP tools the agent definition declares, named
// `<server>.<tool>` (a sub-agent's own servers for its passages). MCP servers are connected on an
// agent's first passage, reused by its later ones, and closed by close(). Every factory is a port: the adapters behind them are composed in
// src/library.
import path from "node:path";
import type { McpServer } from "../core/definition/types.js";
import type { ResourceLimits } from "../core/ports/sandbox.js";
import { createCompositeToolHost, type ToolHost } from "../core/ports/tool-host.js";
import { fail, ok, type Problem, type Result } from "../core/result.js";
import type { CommandProfile } from "../core/taskpack/task-pack.js";
import type { ToolEffect } from "../core/turn/tool-registry.js";
import type { ToolsForPassage } from "./agent-passages.js";
import type { AgentSite } from "./agent-site.js";
import type { PassageRequest } from "./context.js";

/** An MCP server as an agent definition declares it. */
export type McpServerDeclaration = Pick<McpServer, "name" | "transport"> &
  Partial<Pick<McpServer, "command" | "args" | "url">>;

export interface McpConnectOptions {
  readonly servers: readonly McpServerDeclaration[];
  /** Working folder of stdio servers: the agent definition's folder. */
  readonly cwd?: string;
  readonly connectTimeoutMs?: number;
  readonly callTimeoutMs?: number;
  readonly effect: ToolEffect;
}

/** An open connection to an agent's MCP servers: its tools, and what ends it. */
export interface McpConnection extends ToolHost {
  close(): Promise<void>;
}

/** Connects an agent's MCP servers (the official SDK's client in src/adapters). */
export type McpConnect = (options: McpConnectOptions) => Promise<Result<McpConnection>>;

/** The pack's observation command profiles as tools, each call run in a fresh contained environment. */
export type ProfileToolsFactory = (
  commands: ReadonlyMap<string, CommandProfile>,
  baselineDir: string,
  resources?: ResourceLimits,
  host?: HostFolders,
) => ToolHost;

/** What of the host a pack's environments contain besides the workspace (its fields of the same names). */
export interface HostFolders {
  readonly dependencies: readonly string[];
  readonly toolchains: readonly string[];
}

export interface PassageToolsOptions {
  /** The workspace tools over a baseline folder (one host per folder is made). */
  readonly workspace: (root: string) => ToolHost;
  /**
   * The pack's observation profiles as `profile.<name>` tools. Absent (no containment backend): the
   * profiles are not offered, never run uncontained.
   */
  readonly profiles?: ProfileToolsFactory | undefined;
  /** Tools written in code, offered to every passage beside the others. */
  readonly code?: ToolHost | undefined;
  /** Connects MCP servers; absent, an agent that declares servers gets `tool/mcp-unavailable`. */
  readonly connect?: McpConnect | undefined;
  readonly connectTimeoutMs?: number;
  readonly callTimeoutMs?: number;
}

export interface PassageTools {
  /** The tools of a passage of the pack agent of its role, or of `site` (a sub-agent). */
  readonly toolsFor: (request: PassageRequest, site?: AgentSite) => ReturnType<ToolsForPassage>;
  /** Ends every MCP connection and stdio server process opened so far; later passages reconnect. */
  close(): Promise<void>;
}

function serversOf(definition: unknown): readonly McpServerDeclaration[] {
  const servers = (definition as { mcpServers?: unknown } | undefined)?.mcpServers;
  return Array.isArray(servers) ? (servers as McpServerDeclaration[]) : [];
}

interface Connected {
  readonly host: ToolHost;
  readonly mcp: McpConnection;
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
  // Workspace reads, plus the pack's observation profiles when commands can be contained, plus
  // the tools written in code.
  const baseOf = (request: PassageRequest): Result<ToolHost> => {
    const workspace = workspaceOf(request.pack.baselineDir);
    if (opts.profiles === undefined && opts.code === undefined) return ok(workspace);
    const key = packKey(request);
    let base = bases.get(key);
    if (base === undefined) {
      const { commands } = request.pack.pack;
      base = createCompositeToolHost([
        workspace,
        ...(opts.profiles === undefined
          ? []
          : [
              opts.profiles(commands, request.pack.baselineDir, request.pack.pack.resources, {
                dependencies: request.pack.pack.dependencies,
                toolchains: request.pack.pack.toolchains,
              }),
            ]),
        ...(opts.code === undefined ? [] : [opts.code]),
      ]);
      bases.set(key, base);
    }
    return base;
  };

  const connectAgent = async (
    request: PassageRequest,
    file: string | undefined,
    servers: readonly McpServerDeclaration[],
  ): Promise<Result<Connected>> => {
    const connect = opts.connect;
    if (connect === undefined) {
      const names = servers.map((s) => s.name).join(", ");
      const message = `the ${request.role} declares MCP servers (${names}) and this host connects none`;
      return fail([{ code: "tool/mcp-unavailable", path: "", message }]);
    }
    const mcp = await connect({
      servers,
      ...(file === undefined ? {} : { cwd: path.dirname(file) }),
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
    toolsFor: async (request, site) => {
      const agent = request.pack.agents[request.role];
      const servers = serversOf(site?.definition ?? agent?.definition);
      if (servers.length === 0) return baseOf(request);
      const key = `${packKey(request)}\n${site?.id ?? request.agentId}`;
      let pending = connections.get(key);
      if (pending === undefined) {
        pending = connectAgent(request, site?.file ?? agent?.path, servers);
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
