// The content ID of an agent definition (docs/spec/definitions.md): BLAKE3-256 over the JCS bytes of its stored form,
// as a CIDv1 with codec json-jcs (`baga6yaq6…`); and the `agent:<cid>` id facts carry.
import { blake3Hasher, CODEC_JSON_JCS, cidFromDigest } from "../cid/cid.js";
import { canonicalBytesInto } from "../records/canonical.js";
import { storedForm } from "./canonical-form.js";
import type { AgentDefinition } from "./types.js";

/**
 * The content ID of a definition in the usual spelling (as `validateDefinition` returns it). Nulls
 * of optional properties and absent graph lists are normalised here too, so both give one ID.
 */
export function definitionId(
  normalised: AgentDefinition | Readonly<Record<string, unknown>>,
): string {
  return storedFormId(storedForm(normalised));
}

/**
 * The content ID of a definition already in its stored form (as `canonicalForm` makes it): the
 * same ID as `definitionId`, with the JCS bytes hashed chunk by chunk as they are written, so
 * neither a copy of the definition nor its whole canonical text is made.
 */
export function storedFormId(stored: AgentDefinition | Readonly<Record<string, unknown>>): string {
  return cidFromDigest(CODEC_JSON_JCS, canonicalBytesInto(stored, blake3Hasher).digest());
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
