// The public API's main signatures, checked by the compiler (`npm run typecheck` covers test/):
// createWarrant and its handle, the event union, models as functions or objects, defineTool's
// inferred input, the error code union.
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  type CodeTool,
  type Comparison,
  createWarrant,
  defineTool,
  type EvalEvent,
  type EvalHandle,
  type EvalReport,
  isWarrantError,
  type LoopOutcome,
  type Model,
  type ModelFunction,
  type ModelProvider,
  type ModelRequest,
  openaiModel,
  type QueryId,
  type RecordRef,
  type RunHandle,
  type RunRef,
  type Usage,
  type Warrant,
  type WarrantErrorCode,
  type WarrantEvent,
  type WarrantOptions,
} from "../src/index.js";
import { type ScriptedModel, scriptedModel } from "../src/testing.js";

describe("the public API's types", () => {
  it("createWarrant builds a Warrant from options, all of them optional", () => {
    expectTypeOf(createWarrant).parameter(0).toEqualTypeOf<WarrantOptions | undefined>();
    expectTypeOf(createWarrant).returns.toEqualTypeOf<Promise<Warrant>>();
  });

  it("evals.run returns a handle: an async iterable of cell events with the report as result", () => {
    expectTypeOf<Warrant["evals"]["run"]>().returns.toEqualTypeOf<EvalHandle>();
    expectTypeOf<EvalHandle>().toExtend<AsyncIterable<EvalEvent>>();
    expectTypeOf<EvalHandle["result"]>().toEqualTypeOf<Promise<EvalReport>>();
    expectTypeOf<Warrant["evals"]["report"]>().returns.toEqualTypeOf<Promise<EvalReport>>();
    expectTypeOf<Warrant["evals"]["compare"]>().returns.toEqualTypeOf<Promise<Comparison>>();
  });

  it("run and resume return a handle: an async iterable of events with a result", () => {
    expectTypeOf<Warrant["run"]>().returns.toEqualTypeOf<RunHandle>();
    expectTypeOf<Warrant["resume"]>().returns.toEqualTypeOf<RunHandle>();
    expectTypeOf<RunHandle>().toExtend<AsyncIterable<WarrantEvent>>();
    expectTypeOf<RunHandle["result"]>().toEqualTypeOf<Promise<LoopOutcome>>();
    expectTypeOf<RunHandle["query"]>().toEqualTypeOf<Promise<QueryId>>();
    expectTypeOf<Warrant["resume"]>().parameter(0).toEqualTypeOf<QueryId>();
    expectTypeOf<Warrant["record"]>().parameter(0).toEqualTypeOf<RecordRef | RunRef>();
    expectTypeOf<Warrant["open"]>().returns.toEqualTypeOf<Promise<QueryId>>();
    // What the library hands out goes back in as it is.
    type Listing = Awaited<ReturnType<Warrant["loops"]>>[number];
    type Pending = Awaited<ReturnType<Warrant["pending"]>>[number];
    type View = NonNullable<Awaited<ReturnType<Warrant["show"]>>>;
    type Stored = NonNullable<Awaited<ReturnType<Warrant["record"]>>>;
    expectTypeOf<Listing["query"]>().toExtend<Parameters<Warrant["show"]>[0]>();
    expectTypeOf<Pending["query"]>().toExtend<Parameters<Warrant["cancel"]>[0]>();
    expectTypeOf<Pending["proposal"]>().toExtend<Parameters<Warrant["record"]>[0]>();
    expectTypeOf<Pending["run"]>().toExtend<Parameters<Warrant["approve"]>[0]>();
    expectTypeOf<View["records"][number]["ref"]>().toExtend<Parameters<Warrant["record"]>[0]>();
    expectTypeOf<Stored["query"]>().toExtend<Parameters<Warrant["resume"]>[0]>();
    expectTypeOf<WarrantEvent["query"]>().toExtend<Parameters<Warrant["answer"]>[0]>();
    // A plain string does not: text from outside goes through toQueryId / toRecordRef.
    expectTypeOf<string>().not.toExtend<Parameters<Warrant["show"]>[0]>();
    expectTypeOf<string>().not.toExtend<Parameters<Warrant["record"]>[0]>();
  });

  it("events are a union discriminated by kind, each with its time and loop", () => {
    expectTypeOf<WarrantEvent["at"]>().toEqualTypeOf<string>();
    expectTypeOf<WarrantEvent["query"]>().toEqualTypeOf<QueryId>();
    type ModelEnd = Extract<WarrantEvent, { kind: "model-call-end" }>;
    expectTypeOf<ModelEnd["usage"]>().toEqualTypeOf<Usage | undefined>();
    type ToolEnd = Extract<WarrantEvent, { kind: "tool-call-end" }>;
    expectTypeOf<ToolEnd["tool"]>().toEqualTypeOf<
      "workspace" | "profile" | "mcp" | "code" | "definition"
    >();
    type Approval = Extract<WarrantEvent, { kind: "approval-requested" }>;
    expectTypeOf<Approval["approval"]>().toEqualTypeOf<"mutation" | "admission">();
  });

  it("a model is a plain async function or a provider of this specification version", () => {
    const fn = async (_request: ModelRequest) => "text";
    expectTypeOf(fn).toExtend<ModelFunction>();
    expectTypeOf<ModelFunction>().toExtend<Model>();
    expectTypeOf<ModelProvider>().toExtend<Model>();
    expectTypeOf<ModelProvider["specificationVersion"]>().toEqualTypeOf<"v1">();
    expectTypeOf(openaiModel).returns.toEqualTypeOf<ModelProvider>();
    expectTypeOf(scriptedModel).returns.toEqualTypeOf<ScriptedModel>();
    expectTypeOf<ScriptedModel>().toExtend<ModelProvider>();
    // An object without the version is not a model.
    expectTypeOf<{ id: string; complete: ModelProvider["complete"] }>().not.toExtend<Model>();
  });

  it("defineTool infers its input from a Standard Schema, else takes a JSON object", () => {
    defineTool({
      name: "a.b",
      description: "",
      inputSchema: z.object({ n: z.number(), s: z.string().optional() }),
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ n: number; s?: string | undefined }>();
        return "";
      },
    });
    const tool = defineTool({
      name: "c.d",
      description: "",
      inputSchema: { type: "object" },
      execute: (input) => {
        expectTypeOf(input).toEqualTypeOf<Record<string, unknown>>();
        return input;
      },
    });
    expectTypeOf(tool).toEqualTypeOf<CodeTool>();
  });

  it("isWarrantError narrows the code to the namespaced union", () => {
    const e: unknown = new Error("x");
    if (isWarrantError(e)) {
      expectTypeOf(e.code).toEqualTypeOf<WarrantErrorCode>();
      expectTypeOf<"loop/not-opened">().toExtend<WarrantErrorCode>();
      expectTypeOf<"store/unreachable">().toExtend<WarrantErrorCode>();
      expectTypeOf<"nonsense">().not.toExtend<WarrantErrorCode>();
    }
  });
});
