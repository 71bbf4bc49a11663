// Request digests of a passage. A request's digest commits to its whole conversation through a
// hash chain over the entries, so each turn hashes only what it appended: per-turn cost stays flat
// however long the passage grows.
import { createHash } from "node:crypto";
import { canonicalJson } from "../core/records/canonical.js";
import type { ConversationEntry, ModelRequest } from "../core/turn/model-provider.js";

function sha256(text: string): string {
  return `sha256:${createHash("sha256").update(text).digest("base64url")}`;
}

/** What an entry contributes to the chain: the model's raw output, not the adapter's parse. */
function digestable(entry: ConversationEntry): unknown {
  switch (entry.kind) {
    case "model":
      return { kind: "model", raw: entry.response.raw };
    case "user":
    case "tool-results":
    case "repair":
      return entry;
  }
}

export class RequestDigests {
  private head: string;
  private length = 0;
  private readonly fixed: string;

  /** `fixed` digests what every request of the passage shares: system, tools, message types. */
  constructor(fixed: {
    system: string;
    tools: readonly unknown[];
    messageTypes: readonly string[];
  }) {
    this.fixed = sha256(canonicalJson(fixed));
    this.head = sha256(`warrant.passage.conversation ${this.fixed}`);
  }

  /** Folds in the entries appended since the last call. */
  advance(conversation: readonly ConversationEntry[]): void {
    for (; this.length < conversation.length; this.length++) {
      const entry = conversation[this.length] as ConversationEntry;
      this.head = sha256(`${this.head}\n${canonicalJson(digestable(entry))}`);
    }
  }

  /** The digest of a request whose conversation has just been folded in. */
  digest(request: ModelRequest): string {
    this.advance(request.conversation);
    return sha256(`${this.fixed}\n${this.head}\n${request.length}\n${request.maxOutputTokens}`);
  }
}
