// Reading a task pack file: parse, validate, and resolve the paths it names against its folder.
import { lstat, readFile, realpath, stat } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { fail, ok, type Problem, type Result } from "../../core/result.js";
import { pathWithin, toolchainForbiddenWhy } from "../../core/taskpack/dependencies.js";
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
 * `taskpack/agent-missing` (an agent file is not a regular file), `taskpack/dependency-missing` (a
 * listed dependency is not there), `taskpack/dependency-not-folder` (it is a file, a symbolic link,
 * or reached through one), `taskpack/dependency-outside` (its real path leaves the workspace),
 * `taskpack/toolchain-missing` (a toolchain is not a folder), `taskpack/toolchain-forbidden` (its
 * real path is forbidden, is the home folder, or holds the workspace or the temp folder). Relative
 * paths resolve against the pack file's folder.
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
  } else problems.push(...(await dependencyProblems(file, workspaceDir, pack.dependencies)));
  problems.push(...(await toolchainProblems(file, workspaceDir, pack.toolchains)));
  const resolved = (rel: string) => path.resolve(dir, rel);
  const { summarizer, "adversarial-critic": critic } = pack.agents;
  const agentFiles: TaskPackAgents = {
    implementer: resolved(pack.agents.implementer),
    reviewer: resolved(pack.agents.reviewer),
    ...(summarizer === undefined ? {} : { summarizer: resolved(summarizer) }),
    ...(critic === undefined ? {} : { "adversarial-critic": resolved(critic) }),
  };
  // In the order the pack names them, so problems come in the order of its text.
  for (const [role, rel] of Object.entries(pack.agents)) {
    if (typeof rel !== "string") continue;
    const abs = resolved(rel);
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
    agentFiles,
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

/** Each dependency is a real folder of the workspace: there, not a link, not reached through one. */
async function dependencyProblems(
  file: string,
  workspaceDir: string,
  dependencies: readonly string[],
): Promise<Problem[]> {
  const problems: Problem[] = [];
  const root = await realpath(workspaceDir).catch(() => workspaceDir);
  for (const [i, dep] of dependencies.entries()) {
    const at = `/dependencies/${i}`;
    const abs = path.join(workspaceDir, dep);
    const st = await lstat(abs).catch(() => undefined);
    if (st === undefined) {
      problems.push({
        code: "taskpack/dependency-missing",
        path: at,
        message: `${file}: the dependency ${dep} is not in the workspace ${workspaceDir} (install it there first: npm ci, python -m venv …)`,
      });
      continue;
    }
    const real = await realpath(abs).catch(() => abs);
    if (!pathWithin(real, root)) {
      problems.push({
        code: "taskpack/dependency-outside",
        path: at,
        message: `${file}: the dependency ${dep} leads outside the workspace (to ${real})`,
      });
    } else if (!st.isDirectory() || real !== path.join(root, dep)) {
      problems.push({
        code: "taskpack/dependency-not-folder",
        path: at,
        message: `${file}: the dependency ${dep} is ${st.isSymbolicLink() ? "a symbolic link" : st.isDirectory() ? "reached through a symbolic link" : "not a folder"}: list the folder itself`,
      });
    }
  }
  return problems;
}

/** Each toolchain is a folder whose real path is allowed, is not the home folder, holds no workspace. */
async function toolchainProblems(
  file: string,
  workspaceDir: string,
  toolchains: readonly string[],
): Promise<Problem[]> {
  const problems: Problem[] = [];
  const workspace = await realpath(workspaceDir).catch(() => workspaceDir);
  const home = await realpath(homedir()).catch(() => homedir());
  const temp = await realpath(tmpdir()).catch(() => tmpdir());
  for (const [i, tc] of toolchains.entries()) {
    const at = `/toolchains/${i}`;
    const real = await realpath(tc).catch(() => undefined);
    const st = real === undefined ? undefined : await stat(real).catch(() => undefined);
    if (real === undefined || st === undefined || !st.isDirectory()) {
      problems.push({
        code: "taskpack/toolchain-missing",
        path: at,
        message: `${file}: the toolchain ${tc} is not a folder on this host`,
      });
      continue;
    }
    const why =
      toolchainForbiddenWhy(real, home) ??
      toolchainForbiddenWhy(tc, home) ??
      (pathWithin(workspace, real) ? `it holds the pack's workspace ${workspace}` : undefined) ??
      // Environments and pinned baselines are made there: other runs' workspaces.
      (pathWithin(temp, real)
        ? `it holds the temp folder ${temp}, where environments are made`
        : undefined);
    if (why !== undefined) {
      problems.push({
        code: "taskpack/toolchain-forbidden",
        path: at,
        message: `${file}: the toolchain ${tc}${real === tc ? "" : ` (${real})`} may not be bound into the sandbox: ${why}`,
      });
    }
  }
  return problems;
}
