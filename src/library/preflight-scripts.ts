// `run --check`'s scripts check: every line of the scripted model each role runs on, read as the
// turn it will be: the model-turn schema, the tools the passage offers (workspace reads, the pack's
// observation profiles, the definition's skill, memory and sub-agent tools), each message type's
// payload schema, the types the role may emit, and an implementer's Plan against the pack. A line
// that fails is `model/script-invalid`, named `FILE:LINE` with the JSON Pointer into its turn.
// Raw-text, refusal and truncation lines (written to exercise repair) are not turns: not checked.
import path from "node:path";
import { readScriptLines } from "../adapters/fs/script-file.js";
import { parseModelUri } from "../adapters/models/model-uri.js";
import type { ScriptedAnswer } from "../adapters/models/scripted-model.js";
import { profileToolSpecs } from "../adapters/tools/profile-tools.js";
import { WORKSPACE_TOOL_SPECS } from "../adapters/tools/workspace-tools.js";
import type { AgentDefinition } from "../core/definition/types.js";
import { ROLES, type Role } from "../core/loop/types.js";
import type { Problem } from "../core/result.js";
import { checkPlan } from "../core/taskpack/plan-check.js";
import {
  createToolRegistry,
  type ToolRegistry,
  type ToolSpec,
} from "../core/turn/tool-registry.js";
import { validateTurn } from "../core/turn/validate-turn.js";
import { MEMORY_WRITE } from "../runtime/memory-tools.js";
import { SKILL_READ } from "../runtime/skill-tools.js";
import { subAgentToolName } from "../runtime/sub-agent-tools.js";
import type { LoadedPack } from "../runtime/task-pack.js";
import type { CheckProblem, PreflightCheck } from "./preflight-types.js";

/** At most this many problems are reported per script: the first ones say what to fix. */
const MAX_PER_SCRIPT = 20;

const ANY_OBJECT = { type: "object" } as const;

/** The definition's own tools, by name (their arguments are checked when they run). */
function definitionTools(definition: AgentDefinition | undefined): ToolSpec[] {
  const specs: ToolSpec[] = [];
  const tool = (name: string): ToolSpec => ({
    name,
    description: name,
    inputSchema: ANY_OBJECT,
    effect: "observation",
  });
  if ((definition?.skills?.length ?? 0) > 0) specs.push(tool(SKILL_READ));
  if (definition?.memory?.some((m) => m.writable) === true) specs.push(tool(MEMORY_WRITE));
  for (const sub of definition?.subAgents ?? []) specs.push(tool(subAgentToolName(sub.name)));
  return specs;
}

/** The turn a script line stands for, or undefined for raw text, a refusal or a truncation. */
function turnOf(answer: ScriptedAnswer): unknown {
  if (typeof answer === "string") return undefined;
  if ("kind" in answer) return answer;
  if (answer.stop !== undefined) return undefined;
  return answer.turn;
}

function lineProblems(
  role: Role,
  turn: unknown,
  pack: LoadedPack,
  registry: ToolRegistry,
  mcp: boolean,
): readonly Problem[] {
  const checked = validateTurn(turn, { registry, role });
  if (!checked.ok)
    // An MCP server's tools are known only once it is connected: their names are not judged here.
    return checked.errors.filter((e) => !(mcp && e.code === "turn/unknown-tool"));
  const m = checked.value.message;
  if (role !== "implementer" || m?.type !== "Plan") return [];
  const plan = checkPlan(m.payload, pack.pack);
  return plan.ok
    ? []
    : plan.errors.map((e) => ({
        ...e,
        path: `/message/payload_json${e.path}`,
        message: `the Plan: ${e.path || "(root)"}: ${e.message}`,
      }));
}

export const SCRIPT_CHECK: PreflightCheck = {
  name: "scripts",
  async run(subject) {
    const { pack, models } = subject;
    const problems: CheckProblem[] = [];
    const notes: string[] = [];
    const profiles = profileToolSpecs(pack.pack.commands);
    for (const role of ROLES) {
      const agent = pack.agents[role];
      const uri = models[role];
      if (agent === undefined || uri === undefined) continue;
      const parsed = parseModelUri(uri);
      if (!parsed.ok || parsed.value.kind !== "scripted") continue;
      const file = parsed.value.path;
      // A script that cannot be read or parsed is the models check's to say.
      const lines = readScriptLines(file);
      if (!lines.ok) continue;
      const definition = agent.definition as AgentDefinition | undefined;
      const mcp = (definition?.mcpServers?.length ?? 0) > 0;
      const rel = path.relative(process.cwd(), file);
      const shown = rel === "" || rel.startsWith("..") || path.isAbsolute(rel) ? file : rel;
      const registry = createToolRegistry([
        ...WORKSPACE_TOOL_SPECS,
        ...profiles,
        ...definitionTools(definition),
      ]);
      // Two tools of one name are the definitions check's (and the run's) to refuse.
      if (!registry.ok) continue;
      let found = 0;
      let turns = 0;
      for (const { line, answer } of lines.value) {
        const turn = turnOf(answer);
        if (turn === undefined) continue;
        turns++;
        for (const p of lineProblems(role, turn, pack, registry.value, mcp)) {
          found++;
          if (found > MAX_PER_SCRIPT) continue;
          problems.push({
            code: "model/script-invalid",
            path: p.path,
            message: `${shown}:${line}: ${role}: ${p.code} ${p.path || "(root)"}: ${p.message}`,
            detail: { file, line, role, problem: p.code },
          });
        }
      }
      if (found > MAX_PER_SCRIPT)
        notes.push(`${role}: ${found - MAX_PER_SCRIPT} more problems in ${shown} not listed`);
      if (found === 0)
        notes.push(
          `${role}: ${shown}: ${turns} turn${turns === 1 ? "" : "s"} valid${mcp ? " (MCP tool names not checked)" : ""}`,
        );
    }
    return { problems, notes };
  },
};
