// Starts real MCP server processes for the tests: the fixture server and server-everything.
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { repoRoot } from "../helpers/cli.js";

export const FIXTURE = path.join(repoRoot, "test/fixtures/mcp/server.mjs");
const LOOPBACK = path.join(repoRoot, "test/fixtures/mcp/loopback-listen.mjs");

/** The entry script of @modelcontextprotocol/server-everything (its `bin`). */
export function everythingEntry(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
  return path.join(path.dirname(pkg), "dist/index.js");
}

export interface HttpServer {
  readonly port: number;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Spawns `node ARGS…` and waits for its "PORT <n>" line (HTTP servers bound to 127.0.0.1:0). */
export function startHttpServer(args: readonly string[], timeoutMs = 20_000): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], { stdio: ["ignore", "pipe", "pipe"] });
    let seen = "";
    let errText = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no PORT line within ${timeoutMs} ms: ${errText}`));
    }, timeoutMs);
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      errText = (errText + d).slice(-2000);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening: ${errText}`));
    });
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      seen += d;
      const m = /PORT (\d+)/.exec(seen);
      if (m?.[1] === undefined) return;
      clearTimeout(timer);
      resolve({ port: Number(m[1]), child, stop: () => stopChild(child) });
    });
  });
}

export function startFixture(mode: "http" | "sse"): Promise<HttpServer> {
  return startHttpServer([FIXTURE, mode]);
}

export function startEverythingHttp(): Promise<HttpServer> {
  return startHttpServer(["--import", LOOPBACK, everythingEntry(), "streamableHttp"]);
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** Whether a process id is alive (signal 0 probes without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
