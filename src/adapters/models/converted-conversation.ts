// A passage's conversation converted to a provider's messages incrementally: each entry is converted
// once, when a request first includes it, so a turn never re-converts the whole history.
import type { ConversationEntry, ModelRequest } from "../../core/ports/model-provider.js";

export interface ConvertedConversation<M> {
  readonly messages: M[];
  /** `ends[i]`: the number of messages once entry i is converted. */
  readonly ends: number[];
  /** Tool call ids of the last converted model entry, in order. */
  lastCallIds: readonly string[];
}

/** The messages of a request, converting only the entries not seen before (per conversation). */
export function conversationConverter<M>(
  convert: (entry: ConversationEntry, state: ConvertedConversation<M>) => void,
): (request: ModelRequest) => M[] {
  const conversations = new WeakMap<readonly ConversationEntry[], ConvertedConversation<M>>();
  return (request) => {
    let state = conversations.get(request.conversation);
    if (state === undefined) {
      state = { messages: [], ends: [], lastCallIds: [] };
      conversations.set(request.conversation, state);
    }
    for (let i = state.ends.length; i < request.length; i++) {
      convert(request.conversation[i] as ConversationEntry, state);
      state.ends.push(state.messages.length);
    }
    const end = request.length === 0 ? 0 : (state.ends[request.length - 1] as number);
    return state.messages.slice(0, end);
  };
}
