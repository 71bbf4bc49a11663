// The content ID of an agent definition (docs/spec/definitions.md): BLAKE3-256 over the JCS bytes of its stored form,
// as a CIDv1 with codec json-jcs (`baga6yaq6…`); and the `agent:<cid>` id facts carry.
import { jsonJcsCid } from "../cid/cid.js";
import { canonicalBytes } from "../records/canonical.js";
import { storedForm } from "./canonical-form.js";
import type { AgentDefinition } from "./types.js";

/**
 * The content ID of a definition in the usual spelling (as `validateDefinition` returns it). Nulls
 * of optional properties and absent graph lists are normalised here too, so both give one ID.
 */
export function definitionId(
  normalised: AgentDefinition | Readonly<Record<string, unknown>>,
): string {
  return jsonJcsCid(canonicalBytes(storedForm(normalised)));
}

export type AgentId = `agent:${string}`;

/** `agent:<definition CID>`: how facts and records name the exact definition. */
export function agentIdOf(cid: string): AgentId {
  return `agent:${cid}`;
}

/** Between a root agent's id and a sub-agent's JSON Pointer inside its definition. */
const SUB_AGENT_MARK = "#";

/** `agent:<root CID>#<pointer>`: a sub-agent named within its root definition's content ID. */
export function subAgentIdOf(rootId: string, pointer: string): string {
  const at = rootId.indexOf(SUB_AGENT_MARK);
  return `${at < 0 ? rootId : rootId.slice(0, at)}${SUB_AGENT_MARK}${pointer}`;
}

/** Whether an agent id names a sub-agent (its passages are nested in a parent's). */
export function isSubAgentId(agentId: string): boolean {
  return agentId.includes(SUB_AGENT_MARK);
}
