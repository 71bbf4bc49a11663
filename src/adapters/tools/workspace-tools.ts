// Observation tools over one workspace folder: read a file, list a folder, search text. Every path
// is relative to the workspace; absolute paths, `..` segments and symbolic links whose target
// leaves the workspace are refused (`tool/path-outside-workspace`); output is bounded.
import type { Dirent } from "node:fs";
import { open, readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import {
  type ToolCallOptions,
  type ToolHost,
  type ToolResult,
  toolAnswer,
  toolFailure,
} from "../../core/ports/tool-host.js";
import type { ToolSpec } from "../../core/turn/tool-registry.js";

export interface WorkspaceToolsOptions {
  /** The workspace folder. */
  readonly root: string;
  /** Most bytes of one file returned by read_file (default 64 KiB). */
  readonly maxReadBytes?: number;
  /** Most entries returned by list_dir (default 1000). */
  readonly maxEntries?: number;
  /** Most matching lines returned by search_text (default 200). */
  readonly maxMatches?: number;
  /** Files larger than this are skipped by search_text (default 1 MiB). */
  readonly maxSearchFileBytes?: number;
  /** Most files search_text opens (default 5000). */
  readonly maxSearchFiles?: number;
}

const PATH_PROPERTY = {
  type: "string",
  minLength: 1,
  description: "A path relative to the workspace root ('.' for the root); no '..', not absolute.",
};

export const WORKSPACE_TOOL_SPECS: readonly ToolSpec[] = [
  {
    name: "workspace.read_file",
    description: "Read a text file of the workspace (long files are cut and say so).",
    inputSchema: {
      type: "object",
      properties: { path: PATH_PROPERTY },
      required: ["path"],
      additionalProperties: false,
    },
    effect: "observation",
  },
  {
    name: "workspace.list_dir",
    description: "List a folder of the workspace: one entry a line, folders end with '/'.",
    inputSchema: {
      type: "object",
      properties: { path: PATH_PROPERTY },
      required: ["path"],
      additionalProperties: false,
    },
    effect: "observation",
  },
  {
    name: "workspace.search_text",
    description:
      "Find lines containing a literal text (not a regular expression) in the workspace's files, " +
      "or under one of its folders; answers 'path:line: text' per match.",
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", minLength: 1, description: "The literal text to find." },
        path: PATH_PROPERTY,
      },
      required: ["pattern"],
      additionalProperties: false,
    },
    effect: "observation",
  },
];

class ToolRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** A workspace folder with its real path, resolving tool paths safely inside it. */
class Workspace {
  private realRoot: Promise<string> | undefined;

  constructor(private readonly root: string) {}

  private rootReal(): Promise<string> {
    this.realRoot ??= realpath(this.root);
    return this.realRoot;
  }

  /** The real path of a workspace-relative path, refused when it leaves the workspace. */
  async resolve(rel: unknown): Promise<{ real: string; shown: string }> {
    if (typeof rel !== "string" || rel === "") {
      throw new ToolRefusal("tool/arguments-invalid", "path must be a non-empty string");
    }
    if (rel.includes("\0")) throw new ToolRefusal("tool/arguments-invalid", "path contains NUL");
    if (path.isAbsolute(rel) || /^[a-zA-Z]:[\\/]/.test(rel) || rel.startsWith("\\")) {
      throw new ToolRefusal(
        "tool/path-outside-workspace",
        `${rel}: absolute paths are refused; give a path relative to the workspace`,
      );
    }
    if (rel.split(/[\\/]/).includes("..")) {
      throw new ToolRefusal(
        "tool/path-outside-workspace",
        `${rel}: '..' is refused; give a path inside the workspace`,
      );
    }
    const root = await this.rootReal();
    const joined = path.resolve(root, rel);
    let real: string;
    try {
      real = await realpath(joined);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR")
        throw new ToolRefusal("tool/not-found", `${rel}: no such file or folder`);
      throw new ToolRefusal("tool/io", `${rel}: ${code ?? "cannot be read"}`);
    }
    if (!isInside(root, real)) {
      throw new ToolRefusal(
        "tool/path-outside-workspace",
        `${rel}: a symbolic link leads outside the workspace`,
      );
    }
    return { real, shown: path.relative(root, joined) || "." };
  }

  /** The workspace root's real path. */
  realRootPath(): Promise<string> {
    return this.rootReal();
  }
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new ToolRefusal("tool/aborted", "the call was cancelled");
}

async function readBounded(file: string, limit: number): Promise<{ text: string; size: number }> {
  const handle = await open(file, "r");
  try {
    const size = (await handle.stat()).size;
    const buf = Buffer.alloc(Math.min(size, limit));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return { text: new TextDecoder("utf-8").decode(buf.subarray(0, bytesRead)), size };
  } finally {
    await handle.close();
  }
}

/** Observation tools over `root`; every call answers, none rejects. */
export function createWorkspaceTools(opts: WorkspaceToolsOptions): ToolHost {
  const ws = new Workspace(opts.root);
  const maxRead = opts.maxReadBytes ?? 64 * 1024;
  const maxEntries = opts.maxEntries ?? 1000;
  const maxMatches = opts.maxMatches ?? 200;
  const maxSearchFile = opts.maxSearchFileBytes ?? 1024 * 1024;
  const maxSearchFiles = opts.maxSearchFiles ?? 5000;

  async function readFile(args: Record<string, unknown>): Promise<ToolResult> {
    const { real, shown } = await ws.resolve(args.path);
    const st = await stat(real);
    if (!st.isFile()) throw new ToolRefusal("tool/not-a-file", `${shown} is not a file`);
    const { text, size } = await readBounded(real, maxRead);
    return toolAnswer(
      size > maxRead
        ? `${text}\n[truncated: ${shown} is ${size} bytes; the first ${maxRead} are shown]`
        : text,
    );
  }

  async function listDir(args: Record<string, unknown>): Promise<ToolResult> {
    const { real, shown } = await ws.resolve(args.path);
    const st = await stat(real);
    if (!st.isDirectory())
      throw new ToolRefusal("tool/not-a-directory", `${shown} is not a folder`);
    const entries = (await readdir(real, { withFileTypes: true })).sort(byName);
    const lines = entries.slice(0, maxEntries).map(entryLine);
    if (entries.length > maxEntries)
      lines.push(`[truncated: ${entries.length} entries; the first ${maxEntries} are shown]`);
    return toolAnswer(lines.join("\n"));
  }

  async function searchText(
    args: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<ToolResult> {
    const pattern = args.pattern;
    if (typeof pattern !== "string" || pattern === "")
      throw new ToolRefusal("tool/arguments-invalid", "pattern must be a non-empty string");
    const root = await ws.realRootPath();
    const start = args.path === undefined ? root : (await ws.resolve(args.path)).real;
    const matches: string[] = [];
    let opened = 0;
    let cut = false;
    for await (const file of walkFiles(start)) {
      checkAborted(signal);
      if (opened >= maxSearchFiles) {
        cut = true;
        break;
      }
      opened++;
      if (
        await searchFile(
          file,
          path.relative(root, file),
          pattern,
          matches,
          maxMatches,
          maxSearchFile,
        )
      ) {
        cut = true;
        break;
      }
    }
    if (matches.length === 0 && !cut)
      return toolAnswer(`no line contains ${JSON.stringify(pattern)}`);
    if (cut)
      matches.push(`[truncated: stopped after ${matches.length} matches in ${opened} files]`);
    return toolAnswer(matches.join("\n"));
  }

  return {
    specs: () => WORKSPACE_TOOL_SPECS,
    async call(
      name: string,
      args: Record<string, unknown>,
      callOpts: ToolCallOptions = {},
    ): Promise<ToolResult> {
      try {
        checkAborted(callOpts.signal);
        switch (name) {
          case "workspace.read_file":
            return await readFile(args);
          case "workspace.list_dir":
            return await listDir(args);
          case "workspace.search_text":
            return await searchText(args, callOpts.signal);
          default:
            return toolFailure("tool/unknown", `no workspace tool named ${name}`);
        }
      } catch (e) {
        if (e instanceof ToolRefusal) return toolFailure(e.code, e.message);
        const code = (e as NodeJS.ErrnoException).code;
        return toolFailure("tool/io", `${name}: ${code ?? "the workspace could not be read"}`);
      }
    },
    close: async () => {},
  };
}

/** Regular files under `start` (or `start` itself), in name order; symbolic links are never followed. */
async function* walkFiles(start: string): AsyncGenerator<string> {
  if ((await stat(start)).isFile()) {
    yield start;
    return;
  }
  const entries = (await readdir(start, { withFileTypes: true })).sort(byName);
  for (const e of entries) {
    const full = path.join(start, e.name);
    if (e.isDirectory()) yield* walkFiles(full);
    else if (e.isFile()) yield full;
  }
}

function byName(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function entryLine(e: Dirent): string {
  if (e.isDirectory()) return `${e.name}/`;
  if (e.isSymbolicLink()) return `${e.name}@`;
  return e.name;
}

/** Appends `file:line: text` for each line containing `pattern`; true when the match limit cut it. */
async function searchFile(
  file: string,
  shown: string,
  pattern: string,
  matches: string[],
  maxMatches: number,
  maxBytes: number,
): Promise<boolean> {
  const st = await stat(file);
  if (st.size > maxBytes) return false;
  const { text } = await readBounded(file, maxBytes);
  if (text.includes("\0")) return false;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (!line.includes(pattern)) continue;
    if (matches.length >= maxMatches) return true;
    matches.push(`${shown}:${i + 1}: ${line.length > 400 ? `${line.slice(0, 400)}…` : line}`);
  }
  return false;
}
