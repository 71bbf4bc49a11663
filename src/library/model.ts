// A role's model as a library user gives it: an object implementing ModelProvider (with its
// `specificationVersion`), or a plain async function that answers one request with a turn. The
// provider factories load their SDK on the first call, so importing the library loads none.

import {
  MODEL_SPECIFICATION_VERSION,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  NO_USAGE,
} from "../core/ports/model-provider.js";
import { WarrantError } from "../core/result.js";
import { modelTarget } from "../core/turn/model-target.js";
import type { ModelTurn } from "../core/turn/types.js";

export { MODEL_SPECIFICATION_VERSION, type ModelProvider };

export interface ModelCallOptions {
  readonly signal?: AbortSignal;
}

/**
 * A model written as a plain async function: it answers a request with a turn object (the seed's
 * ModelTurn shape: `{kind, summary, tool_calls, message}`) or with text the host parses as one.
 * Its usage counts as zero tokens.
 */
export type ModelFunction = (
  request: ModelRequest,
  options: ModelCallOptions,
) => Promise<ModelTurn | string>;

export type Model = ModelProvider | ModelFunction;

function fromFunction(fn: ModelFunction, id: string): ModelProvider {
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id,
    async complete(request, opts) {
      const started = performance.now();
      // A throw that is not a WarrantError fails the passage as `model/failed`, its text unkept.
      const answer = await fn(request, opts?.signal === undefined ? {} : { signal: opts.signal });
      const response: ModelResponse = {
        raw: answer,
        candidate: answer,
        stop: "complete",
        usage: NO_USAGE,
        meta: { id: null, model: null, finishReason: null },
        latencyMs: performance.now() - started,
      };
      return response;
    },
  };
}

/**
 * The provider the runtime calls for a Model. A function gets the id `function:<its name>` (or
 * `function:<role>`); an object must state the specification version this library speaks.
 */
export function providerOf(model: Model, role: string): ModelProvider {
  if (typeof model === "function") return fromFunction(model, `function:${model.name || role}`);
  if (
    typeof model !== "object" ||
    model === null ||
    typeof (model as Partial<ModelProvider>).complete !== "function"
  ) {
    throw new WarrantError(
      "model/invalid",
      `the ${role}'s model is neither a function nor a provider`,
    );
  }
  const version: unknown = model.specificationVersion;
  if (version !== MODEL_SPECIFICATION_VERSION) {
    throw new WarrantError(
      "model/specification-version",
      `the ${role}'s model speaks specification ${JSON.stringify(version)}; this library speaks ${JSON.stringify(MODEL_SPECIFICATION_VERSION)}`,
    );
  }
  return model;
}

/** A provider whose SDK adapter is imported on its first call; `baseURL`: the server it calls. */
export function lazyModel(
  id: string,
  baseURL: string | undefined,
  load: () => Promise<ModelProvider>,
): ModelProvider {
  let loaded: Promise<ModelProvider> | undefined;
  return {
    specificationVersion: MODEL_SPECIFICATION_VERSION,
    id,
    target: modelTarget(id, baseURL),
    async complete(request, opts) {
      loaded ??= load();
      return (await loaded).complete(request, opts);
    },
  };
}
