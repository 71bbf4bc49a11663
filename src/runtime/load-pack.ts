// A task pack as the runtime needs it: the pack file loaded and validated (paths resolved by the
// task-pack loader), then each named agent definition read, validated and identified (`agent:<CID>`).
import { readFile } from "node:fs/promises";
import { loadTaskPack as loadTaskPackFile } from "../adapters/fs/task-pack-files.js";
import { agentIdOf } from "../core/definition/id.js";
import { validateDefinition } from "../core/definition/validate.js";
import { ROLES } from "../core/loop/types.js";
import { digestOf } from "../core/records/canonical.js";
import { fail, ok, type Problem, type Result } from "../core/result.js";
import type { LoadedAgent, LoadedPack } from "./task-pack.js";

export async function loadTaskPack(file: string): Promise<Result<LoadedPack>> {
  const loaded = await loadTaskPackFile(file);
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
