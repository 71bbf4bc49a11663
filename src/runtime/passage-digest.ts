// Request digests of a passage, as a hash chain: request k's digest is
//   sha256(digest of request k−1 ‖ "\n" ‖ JCS({entries appended since request k−1, length, maxOutputTokens}))
// seeded with the digest of what every request shares (system prompt, tools, message types). Each
// digest so commits to its whole request while each turn hashes only what it appended: the cost
// per turn stays flat however long the passage grows. A model's raw output, already canonicalised
// for the transcript, is not canonicalised again (`known`).
import * as crypto from "node:crypto";
import type {
  ConversationEntry,
  ModelRequest,
  ToolResultEntry,
} from "../core/ports/model-provider.js";
import { canonicalJson } from "../core/records/canonical.js";
import {
  CanonicalWriter,
  type KnownBytes,
  memberKey,
  NeedsReference,
} from "../core/records/canonical-bytes.js";
import { sha256 } from "../core/records/sha256.js";

/** `sha256:<43 base64url>` over `text` as UTF-8 (or bytes): what `digestOf` gives for JCS text. */
export function sha256Text(text: string | Uint8Array): string {
  return `sha256:${sha256(text, "base64url")}`;
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

/** What every request of a passage shares. */
export interface FixedPart {
  readonly system: string;
  readonly tools: readonly unknown[];
  readonly messageTypes: readonly string[];
}

/**
 * The last seed made for a tool list (by identity), with the system prompt and message types it
 * was made with: a passage run with the same list, prompt and types (the same agent's next
 * passage) starts from it instead of canonicalising and hashing them again.
 */
const seeds = new WeakMap<
  readonly unknown[],
  { readonly fixed: FixedPart; readonly seed: string }
>();

/** The digest every request's chain starts from: of the system prompt, tools and message types. */
export function seedOf(fixed: FixedPart): string {
  const last = seeds.get(fixed.tools);
  if (
    last !== undefined &&
    last.fixed.system === fixed.system &&
    last.fixed.messageTypes === fixed.messageTypes
  ) {
    return last.seed;
  }
  const { system, tools, messageTypes } = fixed;
  const seed = sha256Text(
    canonicalJson({ "warrant.passage.request": { system, tools, messageTypes } }),
  );
  seeds.set(fixed.tools, { fixed: { system, tools, messageTypes }, seed });
  return seed;
}

/** The canonical bytes of `{"kind":"model","raw":…}` up to the raw output's. */
const MODEL_ENTRY_OPEN = '{"kind":"model","raw":';

/**
 * Where each step is written before it is hashed: one for every passage, as `digest` writes and
 * hashes a step without yielding.
 */
const stepBytes = new CanonicalWriter(new Uint8Array(2048));
const STEP_BYTES_KEPT = 256 * 1024;

/** The room the step writer keeps now (for tests). */
export function stepBytesRoom(): number {
  return stepBytes.buf.length;
}

export class RequestDigests {
  private head: string;
  private length = 0;
  private readonly known: KnownBytes | undefined;

  constructor(fixed: FixedPart, known?: KnownBytes) {
    this.known = known;
    this.head = seedOf(fixed);
  }

  /** The digest of the next request; requests come in order, each covering a longer prefix. */
  digest(request: ModelRequest): string {
    const from = this.length;
    this.length = request.length;
    const out = stepBytes;
    out.reset();
    try {
      this.writeStep(request, from);
    } catch (e) {
      if (!(e instanceof NeedsReference)) throw e;
      // A value the fast writer does not vouch for: the step the reference way, as a whole.
      out.reset();
      out.ascii(this.head);
      out.byte(NEWLINE);
      out.canonical(stepOf(request, from));
    }
    this.head = sha256Text(out.buf.subarray(0, out.pos));
    // A step that needed more than a few chunks' room does not keep it for every later one.
    if (out.buf.length > STEP_BYTES_KEPT) out.buf = new Uint8Array(2048);
    return this.head;
  }

  /**
   * `head ‖ "\n" ‖ JCS({entries, length, maxOutputTokens})`, written without building the step:
   * its keys in their canonical order, each entry as `digestable` gives it.
   */
  private writeStep(request: ModelRequest, from: number): void {
    const out = stepBytes;
    out.ascii(this.head);
    out.byte(NEWLINE);
    out.ascii('{"entries":[');
    for (let i = from; i < request.length; i++) {
      if (i > from) out.byte(COMMA);
      const entry = request.conversation[i] as ConversationEntry;
      if (entry.kind === "tool-results" && toolResults(out, entry)) continue;
      if (entry.kind !== "model") {
        if (!out.value(entry, this.known)) out.ascii("null");
        continue;
      }
      const raw = entry.response.raw;
      if (raw === undefined || typeof raw === "symbol") {
        out.ascii('{"kind":"model"}');
        continue;
      }
      out.ascii(MODEL_ENTRY_OPEN);
      out.value(raw, this.known);
      out.byte(CLOSE);
    }
    out.ascii('],"length":');
    out.value(request.length);
    out.ascii(',"maxOutputTokens":');
    // A number, in practice; anything else is written as the whole step would have it.
    if (!out.value(request.maxOutputTokens)) throw new NeedsReference();
    out.byte(CLOSE);
  }
}

const CONTENT = memberKey("content");
const IS_ERROR = memberKey("isError");
const NAME = memberKey("name");

/**
 * A tool-results entry as the passage makes it (its results plain objects of a name, content and
 * isError, nothing more), written member by member; false, having written nothing, for any other.
 */
function toolResults(
  out: CanonicalWriter,
  entry: Extract<ConversationEntry, { kind: "tool-results" }>,
): boolean {
  const { results } = entry;
  if (!Array.isArray(results) || members(entry) !== 2) return false;
  for (const r of results) if (!isToolResultEntry(r)) return false;
  out.ascii(TOOL_RESULTS_OPEN);
  for (let i = 0; i < results.length; i++) {
    const r = results[i] as ToolResultEntry;
    if (i > 0) out.byte(COMMA);
    out.byte(OPEN);
    out.member(CONTENT, r.content);
    out.member(IS_ERROR, r.isError);
    out.member(NAME, r.name);
    out.byte(CLOSE);
  }
  out.ascii("]}");
  return true;
}

/** A result entry with exactly the three members the passage gives it, and no others. */
function isToolResultEntry(r: unknown): r is ToolResultEntry {
  return (
    typeof r === "object" &&
    r !== null &&
    Object.getPrototypeOf(r) === Object.prototype &&
    members(r) === 3 &&
    Object.hasOwn(r, "name") &&
    Object.hasOwn(r, "content") &&
    Object.hasOwn(r, "isError")
  );
}

/** How many keys `for…in` lists of `o` (an enumerable key on Object.prototype counts too). */
function members(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}

const TOOL_RESULTS_OPEN = '{"kind":"tool-results","results":[';

/** The step of a request as a value: what `writeStep` writes, for the reference implementation. */
function stepOf(request: ModelRequest, from: number): unknown {
  const appended: unknown[] = [];
  for (let i = from; i < request.length; i++) {
    appended.push(digestable(request.conversation[i] as ConversationEntry));
  }
  return { entries: appended, length: request.length, maxOutputTokens: request.maxOutputTokens };
}

const NEWLINE = 0x0a;
const OPEN = 0x7b;
const COMMA = 0x2c;
const CLOSE = 0x7d;
