// One agent definition file as Warrant would run it, outside any task pack (`warrant definition
// show`): its content ID, each model resolved for its provider with its settings as sent, skills and
// read-only memory with their recomputed CIDs, writable memory's keys, declared tools and what each
// binds to among the tools every passage has, middleware and sub-agents — with the problems that
// would refuse a run and the warnings.
import path from "node:path";
import { createDefinitionFiles } from "../adapters/fs/definition-files.js";
import { WORKSPACE_TOOL_SPECS } from "../adapters/tools/workspace-tools.js";
import { agentIdOf } from "../core/definition/id.js";
import type { AgentDefinition } from "../core/definition/types.js";
import type { ValidDefinition } from "../core/definition/validate.js";
import { toolFailure } from "../core/ports/tool-host.js";
import type { Problem } from "../core/result.js";
import type { AgentReport } from "../runtime/definition-preflight.js";
import { preflightAgent } from "../runtime/definition-preflight.js";
import { definitionModelUri } from "./definition-models.js";

export interface DefinitionDescription {
  readonly file: string;
  /** `agent:<CID>`. */
  readonly id: string;
  readonly agent: AgentReport;
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
}

export interface DescribeOptions {
  /** More folders to find skills in, after `skills/` beside the file. */
  readonly skills?: readonly string[];
  /** The namespace of namespace-scoped memory. */
  readonly namespace?: string;
  /** Where provider keys and WARRANT_OPENAI_COMPATIBLE_BASE_URL are read (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A valid definition (from validateDefinition), read from `file`, as it would run. */
export async function describeDefinition(
  valid: ValidDefinition,
  file: string,
  options: DescribeOptions = {},
): Promise<DefinitionDescription> {
  const abs = path.resolve(file);
  const id = agentIdOf(valid.id);
  const env = options.env ?? process.env;
  const workspace = {
    specs: () => WORKSPACE_TOOL_SPECS,
    call: async () => toolFailure("tool/unknown", ""),
  };
  const report = await preflightAgent(
    { id, definition: valid.definition as AgentDefinition, file: abs, pointer: "" },
    {
      files: createDefinitionFiles(),
      skillDirs: (options.skills ?? []).map((d) => path.resolve(d)),
      modelUri: (model, site) => definitionModelUri(model, site, { env }),
      // Outside a pack, a declared tool binds only to what every passage has (workspace reads);
      // profiles, MCP and code tools are bound when a run offers them.
      offered: async () => ({ ok: true, value: workspace }),
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    },
  );
  // Outside a pack, a missing base URL may still come from the pack that runs the definition.
  const later = (p: Problem) => p.code === "definition/base-url-missing";
  return {
    file: abs,
    id,
    agent: report.agent,
    problems: report.problems.filter((p) => !later(p)),
    warnings: [...report.problems.filter(later), ...report.warnings],
  };
}
