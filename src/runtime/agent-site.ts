// Where an agent of a passage comes from: the root definition a task pack names, or one of its
// sub-agents, named by the root's `agent:<CID>` and the sub-agent's JSON Pointer inside it
// (`agent:<CID>#/subAgents/0`), so a sub-agent's id is of the same content ID family as its parent's.
import { subAgentIdOf } from "../core/definition/id.js";
import type { AgentDefinition } from "../core/definition/types.js";
import type { LoadedAgent } from "./task-pack.js";

export interface AgentSite {
  /** `agent:<root CID>`, plus `#<pointer>` for a sub-agent. */
  readonly id: string;
  readonly definition: AgentDefinition;
  /** The root definition's file: skills, memory and scripted models resolve beside it. */
  readonly file: string;
  /** JSON Pointer of this agent inside the root definition (`""` for the root itself). */
  readonly pointer: string;
}

export function rootSite(agent: LoadedAgent): AgentSite {
  return {
    id: agent.id,
    definition: agent.definition as AgentDefinition,
    file: agent.path,
    pointer: "",
  };
}

/** The site of sub-agent `index` of `parent`. */
export function subAgentSite(parent: AgentSite, index: number): AgentSite | undefined {
  const definition = parent.definition.subAgents?.[index];
  if (definition === undefined) return undefined;
  const pointer = `${parent.pointer}/subAgents/${index}`;
  return { id: subAgentIdOf(parent.id, pointer), definition, file: parent.file, pointer };
}
