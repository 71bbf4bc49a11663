// Tools written in TypeScript, offered to passages beside the workspace, profile and MCP tools.
// They run on the host, outside any sandbox, so they are observation-only by type: a code tool has
// no effect to declare and is registered as `observation`. Its input is checked against its JSON
// Schema before it runs (and by its Standard Schema's own validator when it has one); whatever it
// throws becomes an error result the model reads, never a failed passage.

import {
  type ToolHost,
  type ToolResult,
  toolAnswer,
  toolFailure,
} from "../core/ports/tool-host.js";
import { WarrantError } from "../core/result.js";
import type { ToolSpec } from "../core/turn/tool-registry.js";

/** A JSON Schema object (2020-12 or draft-07) whose root accepts objects. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/**
 * The part of a Standard Schema (standardschema.dev) this library reads: its validator, its types,
 * and its JSON Schema (the Standard JSON Schema `jsonSchema.input` converter, as zod 4 has).
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema: {
      readonly input: (options: { readonly target: string }) => Record<string, unknown>;
    };
  };
}

export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | {
      readonly issues: ReadonlyArray<{
        readonly message: string;
        readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
      }>;
    };

/** The input a tool's execute receives: the Standard Schema's output, or a JSON object. */
export type ToolInput<S> =
  S extends StandardSchema<unknown, infer Output> ? Output : Record<string, unknown>;

export interface ToolContext {
  /** Aborted when the passage is cancelled or the call passes its time limit. */
  readonly signal?: AbortSignal;
}

export interface ToolDefinition<S extends JsonSchema | StandardSchema> {
  /** `[a-z][a-z0-9_.-]+`, unique among the passage's tools. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: S;
  /** The tool's answer: text as is, anything else as its JSON text. */
  execute(input: ToolInput<S>, context: ToolContext): Promise<unknown> | unknown;
}

/** A defined tool: its spec as the model sees it, and how it runs. */
export interface CodeTool {
  readonly spec: ToolSpec;
  call(args: Record<string, unknown>, context: ToolContext): Promise<ToolResult>;
}

function isStandardSchema(s: JsonSchema | StandardSchema): s is StandardSchema {
  const std = (s as { "~standard"?: unknown })["~standard"];
  return typeof std === "object" && std !== null;
}

function jsonSchemaOf(name: string, schema: JsonSchema | StandardSchema): JsonSchema {
  if (!isStandardSchema(schema)) return schema;
  const convert = schema["~standard"].jsonSchema?.input;
  if (typeof convert !== "function") {
    throw new WarrantError(
      "tool/input-schema",
      `tool ${name}: its Standard Schema (${schema["~standard"].vendor}) exposes no JSON Schema`,
    );
  }
  return convert({ target: "draft-2020-12" });
}

function issuesText(
  issues: Extract<StandardSchemaResult<unknown>, { issues: unknown }>["issues"],
): string {
  return issues
    .map((i) => {
      const at = (i.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join("/");
      return at === "" ? i.message : `/${at}: ${i.message}`;
    })
    .join("; ");
}

/**
 * Defines an observation tool in code. The name and schema are checked when the tools are
 * registered (`tool/name-invalid`, `tool/duplicate-name`, `tool/input-schema`); a Standard Schema
 * without a JSON Schema is refused here (`tool/input-schema`).
 */
export function defineTool<S extends JsonSchema | StandardSchema>(
  definition: ToolDefinition<S>,
): CodeTool {
  const { name, description, inputSchema } = definition;
  const spec: ToolSpec = {
    name,
    description,
    inputSchema: jsonSchemaOf(name, inputSchema),
    effect: "observation",
  };
  return {
    spec,
    async call(args, context) {
      let input: unknown = args;
      if (isStandardSchema(inputSchema)) {
        const checked = await inputSchema["~standard"].validate(args);
        if (checked.issues !== undefined)
          return toolAnswer(`invalid arguments: ${issuesText(checked.issues)}`, true);
        input = checked.value;
      }
      try {
        const out = await definition.execute(input as ToolInput<S>, context);
        return toolAnswer(typeof out === "string" ? out : (JSON.stringify(out) ?? "null"));
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        return toolAnswer(`the tool failed: ${message}`, true);
      }
    },
  };
}

/** One tool host over the defined tools (their names are checked when the passage registers them). */
export function codeToolHost(tools: readonly CodeTool[]): ToolHost {
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  const specs = tools.map((t) => t.spec);
  return {
    specs: () => specs,
    call: async (name, args, opts) => {
      const tool = byName.get(name);
      if (tool === undefined) return toolFailure("tool/unknown", `no tool named ${name}`);
      return tool.call(args, opts?.signal === undefined ? {} : { signal: opts.signal });
    },
  };
}
