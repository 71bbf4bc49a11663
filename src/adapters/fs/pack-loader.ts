// The PackLoader port over files: the task-pack file loaded and validated (paths resolved by the
// task-pack reader), then each named agent definition read, validated and identified (`agent:<CID>`).
import { readFile } from "node:fs/promises";
import { agentIdOf } from "../../core/definition/id.js";
import { validateDefinition } from "../../core/definition/validate.js";
import { ROLES } from "../../core/loop/types.js";
import { digestOf } from "../../core/records/canonical.js";
import { fail, ok, type Problem, type Result } from "../../core/result.js";
import type { LoadedAgent, LoadedPack } from "../../runtime/task-pack.js";
import { loadTaskPack as readTaskPackFile } from "./task-pack-files.js";

/** A task pack ready to drive; refusals carry `taskpack/…` and `definition/…` codes. */
export async function loadPack(file: string): Promise<Result<LoadedPack>> {
  const loaded = await readTaskPackFile(file);
  if (!loaded.ok) return loaded;
  const { pack, packFile, workspaceDir, agentFiles } = loaded.value;
  const problems: Problem[] = [];
  const agents: Partial<Record<(typeof ROLES)[number], LoadedAgent>> = {};
  for (const role of ROLES) {
    const agentPath = agentFiles[role];
    if (agentPath === undefined) continue;
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
  return ok({
    pack,
    file: packFile,
    digest: digestOf(pack.document),
    baselineDir: workspaceDir,
    agents,
  });
}
