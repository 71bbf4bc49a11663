// The TypeScript types generated from contracts/ are current (`npm run build:types --check`), and
// the hand-written types in src/core follow them: the compiler checks (`npm run typecheck` covers
// test/) that each has the same properties, optionality and nesting as its contract, and that a
// schema-valid document is a value of the hand-written type.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import type * as WireDefinition from "../src/core/contracts/types/agent-definition.v1.js";
import type * as WireLoop from "../src/core/contracts/types/corpus-task-pack-loop.v1.js";
import type { DeadEndV1 } from "../src/core/contracts/types/messages/dead-end.v1.js";
import type { FindingV1 } from "../src/core/contracts/types/messages/finding.v1.js";
import type { PlanV1, Step as WirePlanStep } from "../src/core/contracts/types/messages/plan.v1.js";
import type { QuestionV1 } from "../src/core/contracts/types/messages/question.v1.js";
import type { ResultV1 } from "../src/core/contracts/types/messages/result.v1.js";
import type { VerdictV1 } from "../src/core/contracts/types/messages/verdict.v1.js";
import type { ModelTurnV1 } from "../src/core/contracts/types/model-turn.js";
import type {
  DeliberationLimits,
  RefusalCode,
} from "../src/core/contracts/types/operator-task-common.v1.js";
import type { TaskPackV1 } from "../src/core/contracts/types/task-pack.v1.js";
import type * as Definition from "../src/core/definition/types.js";
import type * as Loop from "../src/core/loop/types.js";
import type { PackLimitKey, TaskPack, TaskPackAgents } from "../src/core/taskpack/task-pack.js";
import type * as Payloads from "../src/core/turn/payloads.js";
import type { MessageType, ModelTurn } from "../src/core/turn/types.js";
import { repoRoot } from "./helpers/cli.js";

const SCRIPT = path.join(repoRoot, "scripts/build-types.mjs");
const GENERATED = path.join(repoRoot, "src/core/contracts/types");

function check(dir: string): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [SCRIPT, "--check", "--dir", dir], { encoding: "utf8" });
  return { status: r.status, stderr: r.stderr };
}

describe("generated contract types", () => {
  it("are current: regenerate with `npm run build:types`", () => {
    const r = check(GENERATED);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("the check names a changed, a missing and a foreign file, and fails", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-types-"));
    try {
      cpSync(GENERATED, dir, { recursive: true });
      writeFileSync(path.join(dir, "model-turn.ts"), "// edited by hand\n");
      rmSync(path.join(dir, "messages/plan.v1.ts"));
      writeFileSync(path.join(dir, "extra.ts"), "");
      const r = check(dir);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("extra.ts (not generated)");
      expect(r.stderr).toContain("messages/plan.v1.ts (missing)");
      expect(r.stderr).toContain("model-turn.ts (differs)");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A type's structure: property names, optionality and nesting, every leaf the same. */
type Shape<T> = T extends readonly (infer U)[]
  ? Shape<U>[]
  : T extends object
    ? { -readonly [K in keyof T]: Shape<Exclude<T[K], null | undefined>> }
    : "leaf";

/** A wire document as stored: optional properties whose value is null are removed. */
type NoNull<T> = T extends readonly (infer U)[]
  ? readonly NoNull<U>[]
  : T extends object
    ? { readonly [K in keyof T]: NoNull<Exclude<T[K], null>> }
    : T;

/** The value a hand-written type must accept for every wire document (and may widen). */
type DeepReadonly<T> = T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

describe("hand-written types follow the generated ones", () => {
  it("agent definition (stored form: nulls removed, graph filled)", () => {
    // Sub-agents are definitions: the same type, checked here once.
    type Own<T> = Omit<T, "graph" | "subAgents">;
    expectTypeOf<Shape<Own<Definition.AgentDefinition>>>().toEqualTypeOf<
      Shape<Own<WireDefinition.AgentDefinitionV1>>
    >();
    expectTypeOf<Definition.AgentDefinition["subAgents"]>().toEqualTypeOf<
      readonly Definition.AgentDefinition[] | undefined
    >();
    expectTypeOf<keyof Definition.AgentDefinition>().toEqualTypeOf<
      keyof WireDefinition.AgentDefinitionV1
    >();
    expectTypeOf<Shape<Definition.Graph>>().toEqualTypeOf<Shape<Required<WireDefinition.Graph>>>();
    expectTypeOf<NoNull<Own<WireDefinition.AgentDefinitionV1>>>().toExtend<
      Own<Definition.AgentDefinition>
    >();
    // And every stored definition is a schema-valid document.
    expectTypeOf<Definition.AgentDefinition>().toExtend<
      DeepReadonly<WireDefinition.AgentDefinitionV1>
    >();
    expectTypeOf<Definition.McpTransport>().toEqualTypeOf<WireDefinition.McpTransport>();
    expectTypeOf<Definition.MemoryScopeKind>().toEqualTypeOf<WireDefinition.MemoryScopeKind>();
    expectTypeOf<Definition.PromptRole>().toEqualTypeOf<WireDefinition.Prompt["role"]>();
    expectTypeOf<Definition.Edge>().toEqualTypeOf<Readonly<WireDefinition.Edge>>();
  });

  it("loop document, facts, steps, stops and limits", () => {
    expectTypeOf<Shape<Loop.LoopDocument>>().toEqualTypeOf<Shape<WireLoop.CorpusTaskPackLoopV1>>();
    expectTypeOf<Shape<Loop.Fact>>().toEqualTypeOf<Shape<WireLoop.Fact>>();
    expectTypeOf<Shape<Loop.Stop>>().toEqualTypeOf<Shape<WireLoop.Stop>>();
    expectTypeOf<DeepReadonly<WireLoop.CorpusTaskPackLoopV1>>().toExtend<Loop.LoopDocument>();
    expectTypeOf<Loop.Limits>().toEqualTypeOf<WireLoop.Limits>();
    expectTypeOf<Loop.LimitLayer>().toEqualTypeOf<DeliberationLimits>();
    expectTypeOf<Loop.LimitKey>().toEqualTypeOf<keyof DeliberationLimits>();
    expectTypeOf<Loop.Role>().toEqualTypeOf<
      Extract<WireLoop.Fact["step"], { kind: "passage-charged" }>["role"]
    >();
    expectTypeOf<Loop.Outcome>().toEqualTypeOf<
      Extract<WireLoop.Fact["step"], { kind: "concluded" }>["outcome"]
    >();
    expectTypeOf<Loop.StepKind>().toEqualTypeOf<WireLoop.Fact["step"]["kind"]>();
    expectTypeOf<Loop.LoopStateName>().toEqualTypeOf<WireLoop.CorpusTaskPackLoopV1["state"]>();
    // Refusal codes are typed `string` by hand and checked against the contract's enum at run
    // time (wire-patterns.ts); the wire type is the narrower one.
    expectTypeOf<RefusalCode>().toExtend<string>();
  });

  it("model turn", () => {
    expectTypeOf<Shape<ModelTurn>>().toEqualTypeOf<Shape<ModelTurnV1>>();
    expectTypeOf<DeepReadonly<ModelTurnV1>>().toEqualTypeOf<ModelTurn>();
    expectTypeOf<MessageType>().toEqualTypeOf<NonNullable<ModelTurnV1["message"]>["type"]>();
  });

  it("message payloads", () => {
    expectTypeOf<Shape<Payloads.PlanPayload>>().toEqualTypeOf<Shape<PlanV1>>();
    expectTypeOf<Shape<Payloads.PlanStep>>().toEqualTypeOf<Shape<WirePlanStep>>();
    expectTypeOf<Shape<Payloads.FindingPayload>>().toEqualTypeOf<Shape<FindingV1>>();
    expectTypeOf<Shape<Payloads.VerdictPayload>>().toEqualTypeOf<Shape<VerdictV1>>();
    expectTypeOf<Shape<Payloads.QuestionPayload>>().toEqualTypeOf<Shape<QuestionV1>>();
    expectTypeOf<Shape<Payloads.ResultPayload>>().toEqualTypeOf<Shape<ResultV1>>();
    expectTypeOf<Shape<Payloads.DeadEndPayload>>().toEqualTypeOf<Shape<DeadEndV1>>();
    expectTypeOf<PlanV1>().toExtend<Payloads.PlanPayload>();
    expectTypeOf<FindingV1>().toExtend<Payloads.FindingPayload>();
    expectTypeOf<VerdictV1>().toExtend<Payloads.VerdictPayload>();
    expectTypeOf<QuestionV1>().toExtend<Payloads.QuestionPayload>();
    expectTypeOf<ResultV1>().toExtend<Payloads.ResultPayload>();
    expectTypeOf<DeadEndV1>().toExtend<Payloads.DeadEndPayload>();
    expectTypeOf<Payloads.Severity>().toEqualTypeOf<FindingV1["severity"]>();
    expectTypeOf<keyof Payloads.PayloadOf>().toEqualTypeOf<MessageType>();
  });

  it("task pack (validated form: the document's fields mapped, plus the document itself)", () => {
    expectTypeOf<Exclude<keyof TaskPack, "document">>().toEqualTypeOf<
      Exclude<keyof TaskPackV1, "schema">
    >();
    expectTypeOf<Shape<TaskPackAgents>>().toEqualTypeOf<Shape<TaskPackV1["agents"]>>();
    expectTypeOf<PackLimitKey>().toEqualTypeOf<keyof DeliberationLimits>();
    expectTypeOf<TaskPack["hil"]>().toEqualTypeOf<TaskPackV1["hil"]>();
    expectTypeOf<TaskPack["admission"]>().toEqualTypeOf<TaskPackV1["admission"]>();
    expectTypeOf<Exclude<keyof TaskPack["passage"], never>>().toEqualTypeOf<
      keyof NonNullable<TaskPackV1["passage"]>
    >();
  });
});
