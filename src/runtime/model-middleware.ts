// A definition's middleware as wrappers around the passage's model (the first listed outermost),
// each leaving a note for the passage's transcript whenever it acts:
// - model-fallback: a call that fails with a provider error it is set to catch (`model/unreachable`,
//   …), or is refused or cut, is asked again of the next referenced model. After a provider error
//   the passage stays on the model that answered. A model is shown turns another model wrote as
//   text, never in a foreign provider's native form.
// - call-limit: the passage fails `passage/call-limit` instead of making more than `maxCalls` calls.
// - history-summary: once a call's input and output tokens reach the threshold, the turns before
//   the last `keepTurns` are replaced by a summary the referenced model writes (a Result message).
import type { MiddlewareSpec } from "../core/definition/middleware-config.js";
import type {
  ConversationEntry,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  Usage,
} from "../core/ports/model-provider.js";
import { MODEL_SPECIFICATION_VERSION } from "../core/ports/model-provider.js";
import { digestOf } from "../core/records/canonical.js";
import { WarrantError } from "../core/result.js";
import type { ResultPayload } from "../core/turn/payloads.js";
import { createToolRegistry } from "../core/turn/tool-registry.js";
import { validateTurn } from "../core/turn/validate-turn.js";

/** What a middleware did at one call of the passage (kept in the transcript). */
export interface MiddlewareNote {
  readonly middleware: MiddlewareSpec["name"];
  /** The passage's model call (0-based) the note is about. */
  readonly call: number;
  readonly event: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

export type Notes = MiddlewareNote[];

/** Model `n` of the definition, as a provider for this passage. */
export type ModelAt = (n: number) => ModelProvider;

const MAX_RENDERED = 4000;

function cut(text: string, max = MAX_RENDERED): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

function usageOf(u: Usage) {
  return { input: u.inputTokens, output: u.outputTokens };
}

/** An entry as text, for a model that did not write it or a summarizer. */
function entryText(entry: ConversationEntry): string {
  switch (entry.kind) {
    case "user":
      return entry.text;
    case "model":
      return `An earlier turn (another model's): ${cut(JSON.stringify(entry.response.candidate))}`;
    case "tool-results":
      return `Tool results:\n${entry.results.map((r) => `- ${r.name}${r.isError ? " (error)" : ""}: ${cut(r.content, 2000)}`).join("\n")}`;
    case "repair":
      return `That turn was invalid:\n${entry.text}`;
  }
}

function triggerOf(e: unknown): string | undefined {
  const code = e instanceof WarrantError ? e.code : undefined;
  return code?.startsWith("model/") === true ? code.slice("model/".length) : undefined;
}

/**
 * The conversation each model of a fallback chain is shown: the passage's own while every turn in
 * it is that model's; from the first turn another model wrote, a copy (kept and appended to, so the
 * provider still converts each entry once) in which other models' turns and what followed them
 * are text. Until then nothing is copied: only how far the model has seen is kept.
 */
class Views {
  /** The models other than the primary that wrote a turn (the primary wrote every other). */
  readonly #authors = new WeakMap<ModelResponse, ModelProvider>();
  readonly #views = new Map<
    ModelProvider,
    { entries: ConversationEntry[] | undefined; upTo: number }
  >();

  wrote(response: ModelResponse, model: ModelProvider, primary: ModelProvider): void {
    if (model !== primary) this.#authors.set(response, model);
  }

  requestFor(model: ModelProvider, request: ModelRequest, primary: ModelProvider): ModelRequest {
    let view = this.#views.get(model);
    if (view === undefined) {
      view = { entries: undefined, upTo: 0 };
      this.#views.set(model, view);
    }
    let afterForeign = false;
    for (let i = view.upTo; i < request.length; i++) {
      const entry = request.conversation[i] as ConversationEntry;
      let shown = entry;
      if (entry.kind === "model") {
        const author = this.#authors.get(entry.response) ?? primary;
        afterForeign = author !== model;
        if (afterForeign) shown = { kind: "user", text: entryText(entry) };
      } else if (afterForeign && (entry.kind === "tool-results" || entry.kind === "repair")) {
        shown = { kind: "user", text: entryText(entry) };
      } else if (entry.kind === "user") {
        afterForeign = false;
      }
      // The first entry shown otherwise: the copy starts with the entries before it, as they are.
      if (shown !== entry && view.entries === undefined) {
        view.entries = request.conversation.slice(0, i);
      }
      view.entries?.push(shown);
    }
    view.upTo = request.length;
    return view.entries === undefined
      ? request
      : { ...request, conversation: view.entries, length: view.entries.length };
  }
}

function modelFallback(
  primary: ModelProvider,
  spec: Extract<MiddlewareSpec, { name: "model-fallback" }>,
  modelAt: ModelAt,
  notes: Notes,
): ModelProvider {
  const chain = [primary, ...spec.models.map(modelAt)];
  const on = new Set<string>(spec.on);
  const views = new Views();
  let active = 0;
  let calls = 0;
  const fellBack = (call: number, from: number, detail: Record<string, unknown>) => {
    const to = (chain[from + 1] as ModelProvider).id;
    const event = "fell-back";
    notes.push({
      middleware: "model-fallback",
      call,
      event,
      detail: { from: chain[from]?.id, to, ...detail },
    });
  };
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id: primary.id,
    async complete(request, opts) {
      const call = calls++;
      for (let i = active; ; i++) {
        const model = chain[i] as ModelProvider;
        const last = i === chain.length - 1;
        const asked = views.requestFor(model, request, primary);
        let response: ModelResponse;
        try {
          response = await model.complete(asked, opts);
        } catch (e) {
          const trigger = triggerOf(e);
          if (last || trigger === undefined || !on.has(trigger)) throw e;
          // A model that cannot be reached now will not be for the rest of the passage.
          active = i + 1;
          fellBack(call, i, { on: (e as WarrantError).code });
          continue;
        }
        const stopped =
          response.stop === "refusal"
            ? "refusal"
            : response.stop === "truncated"
              ? "truncation"
              : undefined;
        if (!last && stopped !== undefined && on.has(stopped)) {
          fellBack(call, i, {
            on: stopped,
            usage: usageOf(response.usage),
            response: response.meta,
          });
          continue;
        }
        views.wrote(response, model, primary);
        if (i > 0) {
          notes.push({
            middleware: "model-fallback",
            call,
            event: "answered-by",
            detail: { model: model.id },
          });
        }
        return response;
      }
    },
  };
}

function callLimit(inner: ModelProvider, maxCalls: number, notes: Notes): ModelProvider {
  let calls = 0;
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id: inner.id,
    // Not async: the inner call's promise is the answer, with no promise around it per call.
    complete(request, opts) {
      const call = calls++;
      if (call >= maxCalls) {
        notes.push({ middleware: "call-limit", call, event: "refused", detail: { maxCalls } });
        return Promise.reject(
          new WarrantError(
            "passage/call-limit",
            `the agent's call-limit middleware allows ${maxCalls} model calls per passage`,
          ),
        );
      }
      try {
        return inner.complete(request, opts);
      } catch (e) {
        return Promise.reject(e);
      }
    },
  };
}

const SUMMARY_SYSTEM =
  "You compact a conversation between a host and an agent. Answer with a Result message whose " +
  "summary keeps every fact, decision, file and tool result the agent still needs; outcome: summarized.";

function historySummary(
  inner: ModelProvider,
  spec: Extract<MiddlewareSpec, { name: "history-summary" }>,
  summarizer: ModelProvider,
  notes: Notes,
): ModelProvider {
  const noTools = createToolRegistry([]);
  let view: { entries: ConversationEntry[]; upTo: number } | undefined;
  let lastTokens = 0;
  let calls = 0;

  const current = (request: ModelRequest): ModelRequest => {
    if (view === undefined) return request;
    for (let i = view.upTo; i < request.length; i++)
      view.entries.push(request.conversation[i] as ConversationEntry);
    view.upTo = request.length;
    return { ...request, conversation: view.entries, length: view.entries.length };
  };

  const compact = async (
    request: ModelRequest,
    call: number,
    signal?: AbortSignal,
  ): Promise<void> => {
    const shown = current(request);
    const entries = shown.conversation.slice(0, shown.length);
    const models = entries.flatMap((e, i) => (e.kind === "model" ? [i] : []));
    const cutAt = models[models.length - spec.keepTurns];
    // Nothing before the turns kept but the evidence (and an earlier summary): nothing to compact.
    if (cutAt === undefined || cutAt <= 2) return;
    const earlier = entries.slice(1, cutAt);
    const text = earlier.map(entryText).join("\n\n");
    let response: ModelResponse;
    try {
      response = await summarizer.complete(
        {
          role: "summarizer",
          system: SUMMARY_SYSTEM,
          conversation: [{ kind: "user", text }],
          length: 1,
          tools: [],
          messageTypes: ["Result"],
          maxOutputTokens: 2048,
        },
        signal === undefined ? undefined : { signal },
      );
    } catch (e) {
      const code = e instanceof WarrantError ? e.code : "model/failed";
      notes.push({
        middleware: "history-summary",
        call,
        event: "summary-failed",
        detail: { code },
      });
      return;
    }
    const registry = noTools.ok ? noTools.value : undefined;
    const checked =
      registry === undefined
        ? undefined
        : validateTurn(response.candidate, { registry, role: "summarizer" });
    const message = checked?.ok === true ? checked.value.message : undefined;
    if (response.stop !== "complete" || message?.type !== "Result") {
      notes.push({
        middleware: "history-summary",
        call,
        event: "summary-failed",
        detail: { stop: response.stop, usage: usageOf(response.usage) },
      });
      return;
    }
    // Validated against the Result payload schema above.
    const summary = (message.payload as ResultPayload).summary;
    const first = entries[0] as ConversationEntry;
    view = {
      entries: [
        first,
        { kind: "user", text: `Summary of the earlier turns:\n${summary}` },
        ...entries.slice(cutAt),
      ],
      upTo: request.length,
    };
    notes.push({
      middleware: "history-summary",
      call,
      event: "compacted",
      detail: {
        by: summarizer.id,
        entries: earlier.length,
        tokens: lastTokens,
        summaryDigest: digestOf(summary),
        raw: response.raw,
        usage: usageOf(response.usage),
      },
    });
  };

  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id: inner.id,
    async complete(request, opts) {
      const call = calls++;
      if (lastTokens >= spec.thresholdTokens) await compact(request, call, opts?.signal);
      const response = await inner.complete(current(request), opts);
      lastTokens = response.usage.inputTokens + response.usage.outputTokens;
      return response;
    },
  };
}

/** The passage's model wrapped in the definition's middleware, the first listed outermost. */
export function withMiddleware(
  primary: ModelProvider,
  specs: readonly MiddlewareSpec[],
  modelAt: ModelAt,
  notes: Notes,
): ModelProvider {
  let model = primary;
  for (const spec of [...specs].reverse()) {
    switch (spec.name) {
      case "model-fallback":
        model = modelFallback(model, spec, modelAt, notes);
        break;
      case "call-limit":
        model = callLimit(model, spec.maxCalls, notes);
        break;
      case "history-summary":
        model = historySummary(model, spec, modelAt(spec.model), notes);
        break;
      default:
        spec satisfies never;
    }
  }
  return model;
}
