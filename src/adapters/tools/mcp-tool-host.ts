// MCP tools through the official SDK, for the mcpServers an agent definition declares: one client
// per server over stdio, streamable HTTP or SSE; tools registered as `<server>.<tool>` with their
// input schemas; every call under a time limit; a server that dies answers its calls with
// `tool/server-died` at once; close() ends every connection and stdio server process.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  type ToolCallOptions,
  type ToolHost,
  type ToolResult,
  toolAnswer,
  toolFailure,
} from "../../core/ports/tool-host.js";
import { assertNever, fail, ok, type Problem, pointer, type Result } from "../../core/result.js";
import { mcpToolName } from "../../core/turn/tool-names.js";
import {
  createToolRegistry,
  type ToolEffect,
  type ToolSpec,
} from "../../core/turn/tool-registry.js";

/** An MCP server as the agent-definition seed's McpServer declares it. */
export interface McpServerConfig {
  readonly name: string;
  readonly transport: "stdio" | "sse" | "streamable_http";
  readonly command?: string | null;
  readonly args?: readonly string[];
  readonly url?: string | null;
}

export interface McpToolHostOptions {
  readonly servers: readonly McpServerConfig[];
  /** Working folder of stdio servers. */
  readonly cwd?: string;
  /** Default time limit of one call (default 60 s); a call's own `timeoutMs` wins. */
  readonly callTimeoutMs?: number;
  /** Time limit of connecting and listing one server's tools (default 30 s). */
  readonly connectTimeoutMs?: number;
  /** Most bytes of one call's content (default 64 KiB). */
  readonly maxOutputBytes?: number;
  /** What becomes of stdio servers' stderr (default: discarded). */
  readonly stderr?: "ignore" | "inherit";
  /** The effect class of every MCP tool (default `observation`). */
  readonly effect?: ToolEffect;
}

export interface McpToolHost extends ToolHost {
  close(): Promise<void>;
  /** The server and the MCP tool name behind a registry name. */
  origin(name: string): { readonly server: string; readonly tool: string } | undefined;
}

interface Connection {
  readonly config: McpServerConfig;
  readonly client: Client;
  readonly transport: Transport;
  /** Set once the server is gone; later calls fail at once. */
  gone: boolean;
  /** Settles when the server goes away; calls race against it. */
  readonly goneSignal: AbortSignal;
}

interface Route {
  readonly connection: Connection;
  readonly tool: string;
}

const CLIENT_INFO = { name: "warrant", version: "0.1.0" };
const PROBE_TIMEOUT_MS = 2_000;

function transportFor(config: McpServerConfig, opts: McpToolHostOptions): Transport {
  switch (config.transport) {
    case "stdio":
      // No `env`: the SDK passes only a safe default set (PATH, HOME, …), so no key reaches a server.
      return new StdioClientTransport({
        command: config.command as string,
        args: [...(config.args ?? [])],
        stderr: opts.stderr ?? "ignore",
        ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
      });
    case "streamable_http":
      return new StreamableHTTPClientTransport(new URL(config.url as string), {
        reconnectionOptions: {
          maxReconnectionDelay: 1000,
          initialReconnectionDelay: 100,
          reconnectionDelayGrowFactor: 1,
          maxRetries: 0,
        },
      });
    case "sse":
      return new SSEClientTransport(new URL(config.url as string));
    default:
      return assertNever(config.transport, "MCP transport");
  }
}

function configProblem(config: McpServerConfig, i: number): Problem | undefined {
  const at = pointer("mcpServers", i);
  if (config.transport === "stdio") {
    if (typeof config.command !== "string" || config.command === "") {
      return {
        code: "tool/mcp-config",
        path: at,
        message: `MCP server ${config.name}: stdio needs a command`,
      };
    }
    return undefined;
  }
  if (config.transport !== "sse" && config.transport !== "streamable_http") {
    return {
      code: "tool/mcp-config",
      path: at,
      message: `MCP server ${config.name}: unknown transport ${JSON.stringify(config.transport)}`,
    };
  }
  if (typeof config.url !== "string" || !URL.canParse(config.url)) {
    return {
      code: "tool/mcp-config",
      path: at,
      message: `MCP server ${config.name}: ${config.transport} needs a URL`,
    };
  }
  return undefined;
}

/** A message without URL query strings or user-info, which may carry credentials. */
function safeMessage(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text
    .replace(/(https?:\/\/)[^\s/@]*@/gi, "$1")
    .replace(/(https?:\/\/[^\s?#]*)\?[^\s#]*/gi, "$1?…");
}

async function connect(config: McpServerConfig, opts: McpToolHostOptions): Promise<Connection> {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const transport = transportFor(config, opts);
  const died = new AbortController();
  const connection: Connection = {
    config,
    client,
    transport,
    gone: false,
    goneSignal: died.signal,
  };
  const markGone = () => {
    if (connection.gone) return;
    connection.gone = true;
    died.abort();
    void client.close().catch(() => undefined);
  };
  client.onclose = markGone;
  // HTTP transports report a dead server only as errors (a broken stream, a refused reconnect) and
  // leave calls pending; a failed ping after any transport error settles that the server is gone.
  let probing = false;
  client.onerror = () => {
    if (connection.gone || probing) return;
    probing = true;
    client.ping({ timeout: PROBE_TIMEOUT_MS }).then(
      () => {
        probing = false;
      },
      () => {
        probing = false;
        markGone();
      },
    );
  };
  const connecting = client.connect(transport, { timeout: opts.connectTimeoutMs ?? 30_000 });
  // The stdio transport spawns synchronously inside connect(): its pid is known from here on.
  const pid = transport instanceof StdioClientTransport ? transport.pid : null;
  try {
    await connecting;
  } catch (e) {
    // A server that started but never finished the handshake must not outlive the refusal: the
    // SDK's own close waits seconds before signalling, so the process is killed here.
    if (pid !== null) killQuietly(pid);
    await client.close().catch(() => undefined);
    throw e;
  }
  return connection;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

async function listAllTools(connection: Connection, timeout: number) {
  const tools = [];
  let cursor: string | undefined;
  do {
    const page = await connection.client.listTools(cursor === undefined ? {} : { cursor }, {
      timeout,
    });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** One MCP content block as text for the model. */
function blockText(block: Record<string, unknown>): string {
  switch (block.type) {
    case "text":
      return String(block.text ?? "");
    case "image":
    case "audio":
      return `[${block.type} ${String(block.mimeType ?? "")}, ${Math.floor((String(block.data ?? "").length * 3) / 4)} bytes]`;
    case "resource": {
      const r = (block.resource ?? {}) as Record<string, unknown>;
      return typeof r.text === "string" ? r.text : `[resource ${String(r.uri ?? "")}]`;
    }
    case "resource_link":
      return `[resource link ${String(block.uri ?? "")}]`;
    default:
      return `[${String(block.type)} content]`;
  }
}

/** Read through a function: TypeScript keeps a narrowed `aborted` across awaits. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function bounded(text: string, max: number): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= max) return text;
  return `${new TextDecoder().decode(bytes.subarray(0, max))}\n[truncated: ${bytes.length} bytes; the first ${max} are shown]`;
}

function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content)
    ? (result.content as Record<string, unknown>[])
    : [];
  if (content.length === 0 && result.structuredContent !== undefined)
    return JSON.stringify(result.structuredContent);
  return content.map(blockText).join("\n");
}

/**
 * Why a call of `name` threw, as its result: the server died (or its connection closed), the call
 * was cancelled, it did not answer within `timeout` ms, or it failed.
 */
function callFailure(
  e: unknown,
  connection: Connection,
  name: string,
  timeout: number,
  signal: AbortSignal | undefined,
): ToolResult {
  const server = connection.config.name;
  if (connection.gone || connection.goneSignal.aborted)
    return toolFailure(
      "tool/server-died",
      `MCP server ${server} stopped during the call of ${name}`,
    );
  if (aborted(signal)) return toolFailure("tool/aborted", `the call of ${name} was cancelled`);
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout)
    return toolFailure("tool/timeout", `${name} did not answer within ${timeout} ms`);
  if (e instanceof McpError && e.code === ErrorCode.ConnectionClosed)
    return toolFailure(
      "tool/server-died",
      `MCP server ${server} stopped during the call of ${name}`,
    );
  return toolFailure("tool/call-failed", `${name} failed: ${safeMessage(e)}`);
}

/**
 * Connects to every server and lists its tools. A server that cannot be reached, a tool name taken
 * twice or an input schema that does not compile refuses the whole host (connections opened so
 * far are closed): a passage never runs with a tool set other than the one declared.
 */
export async function connectMcpToolHost(opts: McpToolHostOptions): Promise<Result<McpToolHost>> {
  const configErrors = opts.servers.map(configProblem).filter((p): p is Problem => p !== undefined);
  if (configErrors.length > 0) return fail(configErrors);

  const connections: Connection[] = [];
  const routes = new Map<string, Route>();
  const specs: ToolSpec[] = [];
  const errors: Problem[] = [];
  const connectTimeout = opts.connectTimeoutMs ?? 30_000;
  const closeAll = async () => {
    await Promise.all(connections.map((c) => c.client.close().catch(() => undefined)));
  };

  for (const [i, config] of opts.servers.entries()) {
    try {
      const connection = await connect(config, opts);
      connections.push(connection);
      for (const tool of await listAllTools(connection, connectTimeout)) {
        const name = mcpToolName(config.name, tool.name);
        if (routes.has(name)) {
          errors.push({
            code: "tool/duplicate-name",
            path: pointer("mcpServers", i),
            message: `MCP tool ${config.name}/${tool.name} maps to ${name}, which is taken`,
          });
          continue;
        }
        routes.set(name, { connection, tool: tool.name });
        specs.push({
          name,
          description: tool.description ?? tool.title ?? "",
          inputSchema: tool.inputSchema,
          effect: opts.effect ?? "observation",
        });
      }
    } catch (e) {
      errors.push({
        code: "tool/mcp-unavailable",
        path: pointer("mcpServers", i),
        message: `MCP server ${config.name} (${config.transport}) could not be reached: ${safeMessage(e)}`,
      });
      break;
    }
  }
  if (errors.length === 0) {
    const registry = createToolRegistry(specs);
    if (!registry.ok)
      errors.push(
        ...registry.errors.map((p) => ({
          ...p,
          message: `${specs[Number(p.path.split("/")[1])]?.name ?? "a tool"}: ${p.message}`,
        })),
      );
  }
  if (errors.length > 0) {
    await closeAll();
    return fail(errors);
  }

  const callTimeout = opts.callTimeoutMs ?? 60_000;
  const maxOutput = opts.maxOutputBytes ?? 64 * 1024;
  let closed = false;

  async function call(
    name: string,
    args: Record<string, unknown>,
    callOpts: ToolCallOptions = {},
  ): Promise<ToolResult> {
    const route = routes.get(name);
    if (route === undefined) return toolFailure("tool/unknown", `no MCP tool named ${name}`);
    const { connection, tool } = route;
    const server = connection.config.name;
    if (closed || connection.gone)
      return toolFailure("tool/server-unavailable", `MCP server ${server} is not running`);
    if (aborted(callOpts.signal))
      return toolFailure("tool/aborted", `the call of ${name} was cancelled`);
    const timeout = callOpts.timeoutMs ?? callTimeout;
    const signals = [
      connection.goneSignal,
      ...(callOpts.signal === undefined ? [] : [callOpts.signal]),
    ];
    const signal = AbortSignal.any(signals);
    try {
      const result = await connection.client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout,
      });
      return toolAnswer(bounded(resultText(result), maxOutput), result.isError === true);
    } catch (e) {
      return callFailure(e, connection, name, timeout, callOpts.signal);
    }
  }

  return ok({
    specs: () => specs,
    call,
    origin: (name) => {
      const r = routes.get(name);
      return r === undefined ? undefined : { server: r.connection.config.name, tool: r.tool };
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await closeAll();
    },
  });
}
