// The scripted model: replays a fixed list of answers and records every request it is given.
// It is the embedded default of the demo and the tests; an answer may be a turn, raw text (to
// exercise repair), a refusal or a truncation.
import { readFileSync } from "node:fs";
import {
  MODEL_SPECIFICATION_VERSION,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type ResponseMeta,
  type StopKind,
  textOrNull,
  tokenCount,
  type Usage,
} from "../../core/ports/model-provider.js";
import { WarrantError } from "../../core/result.js";

/**
 * One scripted answer. Shorthands: an object with `kind` is a turn; a string is raw text.
 * Otherwise `{turn}`, `{text}` or `{stop: "refusal" | "truncated", text?}`, each with an optional
 * `usage: {input, output, cached, reasoning}` (tokens; 0 when absent) and `id` / `model` (what the
 * response reports as its id and model; null when absent).
 */
export type ScriptedAnswer =
  | string
  | { readonly kind: string; readonly [key: string]: unknown }
  | ScriptedEntry;

export interface ScriptedEntry {
  readonly turn?: unknown;
  readonly text?: string;
  readonly stop?: "refusal" | "truncated";
  readonly usage?: {
    readonly input?: number;
    readonly output?: number;
    readonly cached?: number;
    readonly reasoning?: number;
  };
  readonly id?: string;
  readonly model?: string;
}

/** A request as the scripted model saw it; `conversation` is shared, read entries `[0, length)`. */
export type RecordedRequest = ModelRequest;

export interface ScriptedModel extends ModelProvider {
  /** Every request given so far, in order (including those that found the script exhausted). */
  readonly requests: readonly RecordedRequest[];
  /** Answers not yet given. */
  remaining(): number;
}

export function createScriptedModel(
  answers: readonly ScriptedAnswer[],
  options: {
    readonly id?: string;
    /**
     * How many answers of the same script earlier passages already used (`answers` starts after
     * them): said when the script runs out, so the count is the script's, not what was left.
     */
    readonly used?: number;
  } = {},
): ScriptedModel {
  const requests: RecordedRequest[] = [];
  let next = 0;
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id: options.id ?? "scripted",
    requests,
    remaining: () => answers.length - next,
    async complete(request, opts) {
      requests.push(request);
      if (opts?.signal?.aborted === true) {
        throw new WarrantError("model/aborted", "the model call was cancelled");
      }
      const answer = answers[next];
      if (answer === undefined) {
        const used = options.used ?? 0;
        const total = used + answers.length;
        const earlier = used === 0 ? "" : `, ${used} of them used by earlier passages`;
        throw new WarrantError(
          "model/script-exhausted",
          `the scripted model has no answer left (its script has ${total} answer${total === 1 ? "" : "s"}${earlier})`,
        );
      }
      next++;
      return responseOf(answer);
    },
  };
}

function responseOf(answer: ScriptedAnswer): ModelResponse {
  if (typeof answer === "string") return response(answer, answer, "complete", {});
  if ("kind" in answer) return response(answer, answer, "complete", {});
  const entry = answer as ScriptedEntry;
  const stop: StopKind = entry.stop ?? "complete";
  const candidate = entry.turn !== undefined ? entry.turn : (entry.text ?? "");
  return response(entry, candidate, stop, entry);
}

function response(
  raw: unknown,
  candidate: unknown,
  stop: StopKind,
  entry: Pick<ScriptedEntry, "usage" | "id" | "model">,
): ModelResponse {
  const u: Usage = {
    inputTokens: tokenCount(entry.usage?.input),
    outputTokens: tokenCount(entry.usage?.output),
    cachedInputTokens: tokenCount(entry.usage?.cached),
    reasoningTokens: tokenCount(entry.usage?.reasoning),
  };
  const meta: ResponseMeta = {
    id: textOrNull(entry.id),
    model: textOrNull(entry.model),
    finishReason: stop === "complete" ? null : stop,
  };
  return stop === "refusal"
    ? {
        raw,
        candidate,
        stop,
        usage: u,
        meta,
        latencyMs: 0,
        refusal: typeof candidate === "string" ? candidate : "",
      }
    : { raw, candidate, stop, usage: u, meta, latencyMs: 0 };
}

/**
 * Reads a JSONL script: one answer per non-blank line. Lines are JSON: a turn object, a string
 * (raw text), or a `{turn | text | stop, usage?}` entry. Throws `model/script` with the line
 * number on a line that is not JSON.
 */
export function parseScript(text: string): ScriptedAnswer[] {
  return parseScriptLines(text).map((l) => l.answer);
}

/** A script's answer with the (1-based) line of the file it is written on. */
export interface ScriptLine {
  readonly line: number;
  readonly answer: ScriptedAnswer;
}

/** As parseScript, each answer with its line number. */
export function parseScriptLines(text: string): ScriptLine[] {
  const answers: ScriptLine[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // The parser's message quotes the line: a script path an agent definition names may be
      // any readable file, and this message is recorded with the passage.
      throw new WarrantError("model/script", `script line ${i + 1} is not JSON`);
    }
    if (
      typeof value !== "string" &&
      (typeof value !== "object" || value === null || Array.isArray(value))
    ) {
      throw new WarrantError(
        "model/script",
        `script line ${i + 1} is neither a string nor an object`,
      );
    }
    answers.push({ line: i + 1, answer: value as ScriptedAnswer });
  });
  return answers;
}

export function loadScriptedModel(path: string): ScriptedModel {
  return createScriptedModel(parseScript(readFileSync(path, "utf8")), { id: `scripted:${path}` });
}
