// Request digests of a passage, as a hash chain: request k's digest is
//   sha256(digest of request k−1 ‖ "\n" ‖ JCS({entries appended since request k−1, length, maxOutputTokens}))
// seeded with the digest of what every request shares (system prompt, tools, message types). Each
// digest so commits to its whole request while each turn hashes only what it appended: the cost
// per turn stays flat however long the passage grows. A model's raw output, already canonicalised
// for the transcript, is not canonicalised again (`known`).
import * as crypto from "node:crypto";
import type { ConversationEntry, ModelRequest } from "../core/ports/model-provider.js";
import { type CanonicalTexts, canonicalJson } from "../core/records/canonical.js";

/** `crypto.hash` (one call, no Hash object) where Node has it (20.12 and later). */
const oneShot = (crypto as { hash?: typeof crypto.hash }).hash;

/** `sha256:<43 base64url>` over `text` as UTF-8 (or bytes): what `digestOf` gives for JCS text. */
export function sha256Text(text: string | Uint8Array): string {
  const digest =
    oneShot === undefined
      ? crypto.createHash("sha256").update(text).digest("base64url")
      : oneShot("sha256", text, "base64url");
  return `sha256:${digest}`;
}

/** `sha256:<43 base64url>` over pieces (UTF-8 text or bytes) taken in order, never joined. */
export function sha256Of(pieces: readonly (string | Uint8Array)[]): string {
  const h = crypto.createHash("sha256");
  for (const p of pieces) h.update(p);
  return `sha256:${h.digest("base64url")}`;
}

/** What an entry contributes: the model's raw output, not the adapter's parse of it. */
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
  private readonly known: CanonicalTexts | undefined;

  constructor(
    fixed: {
      system: string;
      tools: readonly unknown[];
      messageTypes: readonly string[];
    },
    known?: CanonicalTexts,
  ) {
    this.known = known;
    this.head = sha256Text(canonicalJson({ "warrant.passage.request": fixed }));
  }

  /** The digest of the next request; requests come in order, each covering a longer prefix. */
  digest(request: ModelRequest): string {
    const appended: unknown[] = [];
    for (; this.length < request.length; this.length++) {
      appended.push(digestable(request.conversation[this.length] as ConversationEntry));
    }
    const step = {
      entries: appended,
      length: request.length,
      maxOutputTokens: request.maxOutputTokens,
    };
    this.head = sha256Text(`${this.head}\n${canonicalJson(step, this.known)}`);
    return this.head;
  }
}
