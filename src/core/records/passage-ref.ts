// Passage refs derived from (query, role, agent, ordinal): a passage retried after a crash gets the
// same ref, so its charge replays instead of spending again.
import type { Role } from "../loop/types.js";
import { digestOf } from "./canonical.js";

export const PASSAGE_REF_PREFIX = "passage";

/** `passage:sha256:<43>` over JCS {query/id, role, agent/id, ordinal}. */
export function passageRef(query: string, role: Role, agentId: string, ordinal: number): string {
  return `${PASSAGE_REF_PREFIX}:${digestOf({ "query/id": query, role, "agent/id": agentId, ordinal })}`;
}
