// The model-turn wire shape (model-turn.schema.json, seed spelling) and the validated form the
// runtime consumes, plus which message types each role may emit (docs/spec/turns.md).
import type { DeepReadonly } from "../contracts/read-only.js";
import type { ModelTurnV1 } from "../contracts/types/model-turn.js";
import type { Role } from "../loop/types.js";

export const MESSAGE_TYPES = [
  "Plan",
  "Question",
  "Result",
  "Verdict",
  "Finding",
  "DeadEnd",
] as const satisfies readonly NonNullable<ModelTurnV1["message"]>["type"][];
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** The seed's wire shape of one model turn (contracts/model-turn.schema.json), read-only. */
export type ModelTurn = DeepReadonly<ModelTurnV1>;

/** One tool call as the model wrote it: arguments are a JSON text, parsed only by validation. */
export type ToolCall = ModelTurn["tool_calls"][number];

/** A typed message as the model wrote it: the payload is a JSON text. */
export type TurnMessage = NonNullable<ModelTurn["message"]>;

/** A parsed tool call whose arguments validated against the tool's input schema. */
export interface ValidCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

/** A parsed message whose payload validated against its type's payload schema. */
export interface ValidMessage {
  readonly type: MessageType;
  readonly payload: unknown;
  readonly paperRef: string | null;
}

/** A turn that passed every rule of docs/spec/turns.md, with its JSON texts parsed. */
export interface ValidTurn {
  readonly turn: ModelTurn;
  readonly calls: ValidCall[];
  readonly message?: ValidMessage;
}

/** The message types each role may emit. */
export const ROLE_MESSAGE_TYPES: Readonly<Record<Role, readonly MessageType[]>> = {
  implementer: ["Plan", "Question", "DeadEnd", "Finding"],
  reviewer: ["Verdict", "Question", "Finding"],
  "adversarial-critic": ["Finding", "DeadEnd"],
  summarizer: ["Result"],
};
