// Reading a task pack file: parse, validate, and resolve the paths it names against its folder.
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { fail, ok, type Problem, type Result } from "../../core/result.js";
import type { TaskPack, TaskPackAgents } from "../../core/taskpack/task-pack.js";
import { validateTaskPack } from "../../core/taskpack/validate-task-pack.js";
import { jsonSyntaxError } from "../../core/text/json-position.js";

export interface LoadedTaskPack {
  readonly pack: TaskPack;
  /** Absolute path of the pack file. */
  readonly packFile: string;
  /** Absolute path of the baseline workspace folder. */
  readonly workspaceDir: string;
  /** Absolute paths of the agent definition files, by role. */
  readonly agentFiles: TaskPackAgents;
  /** The pack file's bytes, for hashing. */
  readonly bytes: Uint8Array;
}

/**
 * Load a task pack. Besides validateTaskPack's codes: `taskpack/read` (the file cannot be read),
 * `taskpack/json` (malformed JSON), `taskpack/workspace-missing` (not a folder),
 * `taskpack/agent-missing` (an agent file is not a regular file). Relative paths resolve against
 * the pack file's folder.
 */
export async function loadTaskPack(file: string): Promise<Result<LoadedTaskPack>> {
  const packFile = path.resolve(file);
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(packFile));
  } catch (e) {
    return fail([{ code: "taskpack/read", path: "", message: `${file}: ${(e as Error).message}` }]);
  }
  let doc: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    return fail([{ code: "taskpack/json", path: "", message: `${file}: ${(e as Error).message}` }]);
  }
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const at = jsonSyntaxError(text, e);
    const where = at.line === undefined ? file : `${file}:${at.line}:${at.column ?? 1}`;
    return fail([
      {
        code: "taskpack/json",
        path: "",
        message: `${where}: ${at.message}`,
        ...(at.line === undefined ? {} : { line: at.line, column: at.column ?? 1 }),
      },
    ]);
  }
  const validated = validateTaskPack(doc, { packPath: file });
  if (!validated.ok) return validated;
  const pack = validated.value;
  const dir = path.dirname(packFile);
  const problems: Problem[] = [];
  const workspaceDir = path.resolve(dir, pack.workspace);
  if (!(await isKind(workspaceDir, "dir"))) {
    problems.push({
      code: "taskpack/workspace-missing",
      path: "/workspace",
      message: `${file}: the workspace ${pack.workspace} is not a folder`,
    });
  }
  const agentFiles: Record<string, string> = {};
  for (const [role, rel] of Object.entries(pack.agents)) {
    if (typeof rel !== "string") continue;
    const abs = path.resolve(dir, rel);
    agentFiles[role] = abs;
    if (!(await isKind(abs, "file"))) {
      problems.push({
        code: "taskpack/agent-missing",
        path: `/agents/${role}`,
        message: `${file}: the ${role} agent file ${rel} does not exist`,
      });
    }
  }
  if (problems.length > 0) return fail(problems);
  return ok({
    pack,
    packFile,
    workspaceDir,
    agentFiles: agentFiles as unknown as TaskPackAgents,
    bytes,
  });
}

async function isKind(p: string, kind: "dir" | "file"): Promise<boolean> {
  try {
    const st = await stat(p);
    return kind === "dir" ? st.isDirectory() : st.isFile();
  } catch {
    return false;
  }
}
