// A transcript entry's canonical (JCS) bytes, written by a writer that knows the entry's shape:
// the members of a model call, a tool call and their typed parts (usage, response, validation,
// tool result) in canonical key order, each key's bytes made once, with no key listing or sorting
// per object. Open values (the model's raw output and turn, a tool's arguments, problems) go
// through the general writer. An entry holds exactly the members its type names: a member a
// provider or tool host added beyond them is not recorded. Anything the writer does not vouch for
// (a typed part that is not a plain object, a value that needs the reference implementation) is
// written as its projection (`projection`: the same members as a value) by the general writer.
import type { ResponseMeta, StopKind, Usage } from "../core/ports/model-provider.js";
import type { ToolResult } from "../core/ports/tool-host.js";
import {
  type CanonicalWriter,
  type KnownBytes,
  memberKey,
  NeedsReference,
  plainPrototypes,
} from "../core/records/canonical-bytes.js";
import type { Problem } from "../core/result.js";

/** One entry of a passage transcript (docs/spec/records.md). */
export type TranscriptEntry =
  | {
      readonly kind: "model-call";
      /** 0-based ordinal of the model call in the passage (repair attempts included). */
      readonly index: number;
      readonly requestDigest: string;
      readonly raw: unknown;
      readonly stop: StopKind;
      readonly refusal?: string;
      /** The candidate as the provider gave it, when it did not validate. */
      readonly candidate?: unknown;
      /** The validated turn (seed wire shape). */
      readonly turn?: unknown;
      /**
       * null when the answer was a refusal or truncated (nothing to validate). A message that
       * validated but that the host refused (a Plan outside the task pack) keeps its `turn` beside
       * `valid: false` and the host's problems.
       */
      readonly validation: { readonly valid: boolean; readonly errors: readonly Problem[] } | null;
      readonly usage: Usage;
      /** The provider's response id, responding model and finish reason. */
      readonly response: ResponseMeta;
      readonly latencyMs: number;
    }
  | {
      readonly kind: "model-error";
      readonly index: number;
      readonly requestDigest: string;
      readonly code: string;
      readonly message: string;
    }
  | {
      readonly kind: "tool-call";
      /** The model call whose turn made this tool call. */
      readonly turn: number;
      readonly name: string;
      readonly args: Record<string, unknown>;
      readonly result: ToolResult;
      readonly latencyMs: number;
    };

const K = {
  args: memberKey("args"),
  cachedInputTokens: memberKey("cachedInputTokens"),
  candidate: memberKey("candidate"),
  code: memberKey("code"),
  content: memberKey("content"),
  errors: memberKey("errors"),
  message: memberKey("message"),
  finishReason: memberKey("finishReason"),
  id: memberKey("id"),
  index: memberKey("index"),
  inputTokens: memberKey("inputTokens"),
  isError: memberKey("isError"),
  kind: memberKey("kind"),
  latencyMs: memberKey("latencyMs"),
  model: memberKey("model"),
  name: memberKey("name"),
  ok: memberKey("ok"),
  outputTokens: memberKey("outputTokens"),
  raw: memberKey("raw"),
  reasoningTokens: memberKey("reasoningTokens"),
  refusal: memberKey("refusal"),
  requestDigest: memberKey("requestDigest"),
  response: memberKey("response"),
  result: memberKey("result"),
  stop: memberKey("stop"),
  turn: memberKey("turn"),
  usage: memberKey("usage"),
  valid: memberKey("valid"),
  validation: memberKey("validation"),
} as const;

const OPEN = 0x7b;
const CLOSE = 0x7d;

/** Whether `v` is an object the typed writers may read member by member. */
function plain(v: unknown): v is object {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A typed part: its members by `write` when it is a plain object, else the general writer's. */
function part<T>(
  out: CanonicalWriter,
  key: Uint8Array,
  v: T | null | undefined,
  write: (out: CanonicalWriter, v: T) => void,
): void {
  if (!plain(v)) {
    out.member(key, v);
    return;
  }
  out.key(key);
  out.byte(OPEN);
  write(out, v);
  out.byte(CLOSE);
}

function usage(out: CanonicalWriter, u: Usage): void {
  out.member(K.cachedInputTokens, u.cachedInputTokens);
  out.member(K.inputTokens, u.inputTokens);
  out.member(K.outputTokens, u.outputTokens);
  out.member(K.reasoningTokens, u.reasoningTokens);
}

function meta(out: CanonicalWriter, m: ResponseMeta): void {
  out.member(K.finishReason, m.finishReason);
  out.member(K.id, m.id);
  out.member(K.model, m.model);
}

type Validation = Extract<TranscriptEntry, { kind: "model-call" }>["validation"];

function validation(out: CanonicalWriter, v: NonNullable<Validation>): void {
  out.member(K.errors, v.errors);
  out.member(K.valid, v.valid);
}

function toolResult(out: CanonicalWriter, r: ToolResult): void {
  out.member(K.code, r.code);
  out.member(K.content, r.content);
  out.member(K.isError, r.isError);
  out.member(K.ok, r.ok);
}

function modelCall(
  out: CanonicalWriter,
  e: Extract<TranscriptEntry, { kind: "model-call" }>,
  known: KnownBytes,
): void {
  out.member(K.candidate, e.candidate, known);
  out.member(K.index, e.index);
  out.member(K.kind, e.kind);
  out.member(K.latencyMs, e.latencyMs);
  out.member(K.raw, e.raw, known);
  out.member(K.refusal, e.refusal);
  out.member(K.requestDigest, e.requestDigest);
  part(out, K.response, e.response, meta);
  out.member(K.stop, e.stop);
  out.member(K.turn, e.turn, known);
  part(out, K.usage, e.usage, usage);
  part(out, K.validation, e.validation, validation);
}

function toolCall(
  out: CanonicalWriter,
  e: Extract<TranscriptEntry, { kind: "tool-call" }>,
  known: KnownBytes,
): void {
  out.member(K.args, e.args, known);
  out.member(K.kind, e.kind);
  out.member(K.latencyMs, e.latencyMs);
  out.member(K.name, e.name);
  part(out, K.result, e.result, toolResult);
  out.member(K.turn, e.turn);
}

function modelError(out: CanonicalWriter, e: Extract<TranscriptEntry, { kind: "model-error" }>) {
  out.member(K.code, e.code);
  out.member(K.index, e.index);
  out.member(K.kind, e.kind);
  out.member(K.message, e.message);
  out.member(K.requestDigest, e.requestDigest);
}

/**
 * Writes `entry`'s canonical bytes: the members its type names, in canonical order (the member
 * lists below, which `projection` reads, name the same members: a test holds the two alike).
 * Throws NeedsReference, having written part of it, when the shape writer does not vouch for it
 * (an entry that is not a plain object or of no known kind, a value the general writer hands to
 * the reference implementation); the caller then writes its `projection` with
 * `CanonicalWriter.canonical`.
 */
export function writeEntry(out: CanonicalWriter, entry: TranscriptEntry, known: KnownBytes): void {
  if (!plainPrototypes() || !plain(entry)) throw new NeedsReference();
  switch (entry.kind) {
    case "model-call":
      out.byte(OPEN);
      modelCall(out, entry, known);
      break;
    case "tool-call":
      out.byte(OPEN);
      toolCall(out, entry, known);
      break;
    case "model-error":
      out.byte(OPEN);
      modelError(out, entry);
      break;
    default:
      throw new NeedsReference();
  }
  out.byte(CLOSE);
}

/** The members of `names` that `v` has (not undefined), as a plain object; `v` itself if not plain. */
function pick(v: unknown, names: readonly string[]): unknown {
  if (!plain(v)) return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const n of names) if (o[n] !== undefined) out[n] = o[n];
  return out;
}

const USAGE = ["cachedInputTokens", "inputTokens", "outputTokens", "reasoningTokens"];
const META = ["finishReason", "id", "model"];
const VALIDATION = ["errors", "valid"];
const RESULT = ["code", "content", "isError", "ok"];
const MODEL_CALL = [
  "candidate",
  "index",
  "kind",
  "latencyMs",
  "raw",
  "refusal",
  "requestDigest",
  "stop",
  "turn",
];
const MODEL_ERROR = ["code", "index", "kind", "message", "requestDigest"];
const TOOL_CALL = ["args", "kind", "latencyMs", "name", "turn"];

/**
 * What `writeEntry` records of `entry`, as a value: the members its type names, its typed parts
 * likewise; an entry of no known kind (or not a plain object) as it is.
 */
export function projection(entry: TranscriptEntry): unknown {
  if (!plain(entry)) return entry;
  const e = entry as TranscriptEntry & Record<string, unknown>;
  switch (e.kind) {
    case "model-call": {
      const out = pick(e, MODEL_CALL) as Record<string, unknown>;
      if (e.response !== undefined) out.response = pick(e.response, META);
      if (e.usage !== undefined) out.usage = pick(e.usage, USAGE);
      if (e.validation !== undefined) out.validation = pick(e.validation, VALIDATION);
      return out;
    }
    case "tool-call": {
      const out = pick(e, TOOL_CALL) as Record<string, unknown>;
      if (e.result !== undefined) out.result = pick(e.result, RESULT);
      return out;
    }
    case "model-error":
      return pick(e, MODEL_ERROR);
    default:
      return entry;
  }
}
