// Passage refs derived from (query, role, agent, ordinal): a passage retried after a crash gets the
// same ref, so its charge replays instead of spending again.
import type { Role } from "../loop/types.js";
import { digestOf } from "./canonical.js";

export const PASSAGE_REF_PREFIX = "passage";

/** `passage:sha256:<43>` over JCS {query/id, role, agent/id, ordinal}. */
export function passageRef(query: string, role: Role, agentId: string, ordinal: number): string {
  return `${PASSAGE_REF_PREFIX}:${digestOf({ "query/id": query, role, "agent/id": agentId, ordinal })}`;
}

/**
 * The ref of a sub-agent's passage nested in `parentRef`: `passage:sha256:<43>` over JCS
 * {passage/parent, agent/id, ordinal}, `ordinal` counting the parent passage's sub-agent calls. A
 * parent redone after a crash makes the same calls in the same order, so their charges replay.
 */
export function nestedPassageRef(parentRef: string, agentId: string, ordinal: number): string {
  return `${PASSAGE_REF_PREFIX}:${digestOf({ "passage/parent": parentRef, "agent/id": agentId, ordinal })}`;
}
