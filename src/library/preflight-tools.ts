// The preflight's MCP server check: each server an agent definition of the pack declares can be
// started or reached as declared — a stdio server's command is an executable file (a path, taken
// from the definition's folder as the server is started there, or a name found on PATH), an http
// server's URL is http or https. Nothing is started or connected here.
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { ROLES } from "../core/loop/types.js";
import { pointer } from "../core/result.js";
import type { McpServerDeclaration } from "../runtime/passage-tools.js";
import type { CheckProblem, Env, PreflightCheck } from "./preflight-types.js";

function executable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where a command would be found, or undefined: a path from `cwd`, else the first PATH entry. */
export function findCommand(command: string, cwd: string, env: Env): string | undefined {
  if (command.includes("/")) {
    const file = path.resolve(cwd, command);
    return executable(file) ? file : undefined;
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const file = path.join(path.resolve(cwd, dir), command);
    if (executable(file)) return file;
  }
  return undefined;
}

function serversOf(definition: unknown): readonly McpServerDeclaration[] {
  const servers = (definition as { mcpServers?: unknown } | undefined)?.mcpServers;
  return Array.isArray(servers) ? (servers as McpServerDeclaration[]) : [];
}

function serverProblem(s: McpServerDeclaration, cwd: string, env: Env): string | undefined {
  if (s.transport === "stdio") {
    if (typeof s.command !== "string" || s.command === "") return "declares no command";
    return findCommand(s.command, cwd, env) === undefined
      ? `command ${JSON.stringify(s.command)} is not an executable file ${s.command.includes("/") ? `(from ${cwd})` : "on PATH"}`
      : undefined;
  }
  let url: URL;
  try {
    url = new URL(s.url ?? "");
  } catch {
    return "declares no URL that parses";
  }
  return url.protocol === "http:" || url.protocol === "https:"
    ? undefined
    : "has a URL that is not http or https";
}

export const MCP_SERVER_CHECK: PreflightCheck = {
  name: "mcp-servers",
  async run({ pack, env }) {
    const problems: CheckProblem[] = [];
    const notes: string[] = [];
    for (const role of ROLES) {
      const agent = pack.agents[role];
      if (agent === undefined) continue;
      const cwd = path.dirname(agent.path);
      for (const [i, server] of serversOf(agent.definition).entries()) {
        const wrong = serverProblem(server, cwd, env);
        if (wrong === undefined) {
          notes.push(`${role}: ${server.name} (${server.transport})`);
          continue;
        }
        problems.push({
          code: "tool/mcp-unavailable",
          path: pointer("agents", role, "mcpServers", i),
          message: `${agent.path}: MCP server ${server.name} ${wrong}`,
        });
      }
    }
    return { problems, notes };
  },
};
