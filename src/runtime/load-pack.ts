// Reads a task-pack file from disk: the pack validated against its contract, the baseline folder
// resolved, and each named agent definition read, validated and identified (`agent:<CID>`).
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { agentIdOf } from "../core/definition/id.js";
import { validateDefinition } from "../core/definition/validate.js";
import { ROLES } from "../core/loop/types.js";
import { digestOf } from "../core/records/canonical.js";
import { fail, ok, type Problem, type Result } from "../core/result.js";
import { validateTaskPack } from "../core/taskpack/validate-task-pack.js";
import type { LoadedAgent, LoadedPack } from "./task-pack.js";

export async function loadTaskPack(file: string): Promise<Result<LoadedPack>> {
  const abs = path.resolve(file);
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(abs, "utf8"));
  } catch (e) {
    return fail([{ code: "taskpack/json", path: "", message: `${abs}: ${(e as Error).message}` }]);
  }
  const checked = validateTaskPack(doc, { packPath: abs });
  if (!checked.ok) return checked;
  const pack = checked.value;
  const dir = path.dirname(abs);
  const baselineDir = path.resolve(dir, pack.workspace);
  const problems: Problem[] = [];
  if (!(await stat(baselineDir).catch(() => undefined))?.isDirectory()) {
    problems.push({
      code: "taskpack/workspace-missing",
      path: "/workspace",
      message: `no folder ${baselineDir}`,
    });
  }
  const agents: Partial<Record<(typeof ROLES)[number], LoadedAgent>> = {};
  for (const role of ROLES) {
    const rel = pack.agents[role];
    if (rel === undefined) continue;
    const agentPath = path.resolve(dir, rel);
    const text = await readFile(agentPath, "utf8").catch(() => undefined);
    if (text === undefined) {
      problems.push({
        code: "taskpack/agent-missing",
        path: `/agents/${role}`,
        message: `cannot read ${agentPath}`,
      });
      continue;
    }
    const def = validateDefinition(text);
    if (!def.ok) {
      for (const e of def.errors) problems.push({ ...e, message: `${agentPath}: ${e.message}` });
      continue;
    }
    agents[role] = {
      id: agentIdOf(def.value.id),
      path: agentPath,
      definition: def.value.definition,
    };
  }
  if (problems.length > 0) return fail(problems);
  return ok({ pack, file: abs, digest: digestOf(pack.document), baselineDir, agents });
}
