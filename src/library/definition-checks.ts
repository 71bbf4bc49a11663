// The checks of a task pack's agent definitions as the library reports them (`checkDefinitions`,
// and before every run, open, dispatch and resume): problems refuse the loop before any charge,
// each naming its role and the part of the definition; warnings (a setting a provider cannot
// honour) are told, never silently dropped.
import type { Role } from "../core/loop/types.js";
import { type Problem, WarrantError } from "../core/result.js";
import type { AgentReport, PreflightReport } from "../runtime/definition-preflight.js";

export interface DefinitionCheck {
  /** Each role's agent as it will run. */
  readonly agents: Readonly<Partial<Record<Role, AgentReport>>>;
  /** Each refuses the run; `path` is `/agents/<role><pointer in the definition>`. */
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
}

export function definitionCheckOf(
  reports: Partial<Record<Role, PreflightReport>>,
): DefinitionCheck {
  const agents: Partial<Record<Role, AgentReport>> = {};
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  for (const [role, report] of Object.entries(reports) as [Role, PreflightReport][]) {
    agents[role] = report.agent;
    const at = (p: Problem): Problem => ({
      ...p,
      path: `/agents/${role}${p.path}`,
      message: `${role}: ${p.message}`,
    });
    problems.push(...report.problems.map(at));
    warnings.push(...report.warnings.map(at));
  }
  return { agents, problems, warnings };
}

/** Throws the first problem's code with every problem's message: nothing is charged. */
export function refuseProblems(check: DefinitionCheck): void {
  const first = check.problems[0];
  if (first === undefined) return;
  throw new WarrantError(
    first.code,
    check.problems.map((p) => `${p.path}: ${p.code}: ${p.message}`).join("\n"),
    { path: first.path },
  );
}
