// The eval-set contract and its loader: the schema's refusals with their pointers (and line:column
// in the file), the rules beyond the schema, `{task}` substitution, and cell keys and query ids that
// follow from the pack, the agent configuration and the epoch alone.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  agentConfigurationDigest,
  cellAttemptQuery,
  cellKey,
  cellQuery,
  costOf,
  evalId,
  isEvalId,
  substituteTask,
  unknownPlaceholders,
  validateEvalSet,
  validatePricing,
} from "../../src/core/eval/eval-set.js";
import { parseQueryId } from "../../src/core/ids.js";
import { loadEvalSet } from "../../src/library/evals/load.js";
import { repoRoot } from "../helpers/cli.js";

const EXAMPLE = path.join(repoRoot, "examples/evals");
const dir = mkdtempSync(path.join(tmpdir(), "warrant-eval-set-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const minimal = {
  schema: "warrant-eval-set.v1",
  name: "small",
  tasks: [{ id: "median", pack: "tasks/median/task-pack.json" }],
  agents: [{ id: "a" }],
};

function setFile(doc: unknown, name = "set.json", text?: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text ?? JSON.stringify(doc, null, 2));
  return file;
}

describe("validateEvalSet", () => {
  it("accepts a minimal set with its defaults (1 epoch, operator approval)", () => {
    const r = validateEvalSet(minimal);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.epochs).toBe(1);
    expect(r.value.approval).toBe("operator");
    expect(r.value.requireCertified).toBe(false);
    expect(r.value.digest).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
  });

  it("refuses what the schema refuses, each at its pointer, with a close name for a misspelling", () => {
    const r = validateEvalSet({
      ...minimal,
      schema: "warrant-eval-set.v2",
      epoch: 3,
      agents: [{ id: "A B", modles: {} }],
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const at = r.errors.map((p) => `${p.code} ${p.path}`);
    expect(at).toContain("eval/schema /schema");
    expect(at).toContain("eval/schema /agents/0/id");
    const epoch = r.errors.find((p) => p.path === "" && /epoch/.test(p.message));
    expect(epoch?.message).toMatch(/epochs/);
    const modles = r.errors.find((p) => p.path === "/agents/0");
    expect(modles?.message).toMatch(/models/);
  });

  it("refuses duplicate ids, unknown placeholders, and a cost limit without prices", () => {
    const r = validateEvalSet({
      ...minimal,
      tasks: [minimal.tasks[0], { id: "median", pack: "other.json" }],
      agents: [{ id: "a", models: { implementer: "scripted:s/{tsak}/i.jsonl" } }, { id: "a" }],
      limits: { costUsd: 5 },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((p) => `${p.code} ${p.path}`).sort()).toEqual([
      "eval/duplicate-id /agents/1/id",
      "eval/duplicate-id /tasks/1/id",
      "eval/placeholder-unknown /agents/0/models/implementer",
      "eval/pricing-required /limits/costUsd",
    ]);
  });

  it("substitutes {task} and names only other placeholders as unknown", () => {
    expect(substituteTask("scripted:scripts/{task}/{task}.jsonl", "median")).toBe(
      "scripted:scripts/median/median.jsonl",
    );
    expect(unknownPlaceholders("a/{task}/{role}/{}")).toEqual(["{role}", "{}"]);
  });
});

describe("cell identities", () => {
  const agent = agentConfigurationDigest({
    models: { implementer: "openai:gpt-4.1" },
    definitions: {},
  });

  it("derives the key from pack digest, agent digest and epoch only, and the query from the key", () => {
    const k1 = cellKey("sha256:pack", agent, 1);
    expect(cellKey("sha256:pack", agent, 1)).toBe(k1);
    expect(cellKey("sha256:pack", agent, 2)).not.toBe(k1);
    expect(cellKey("sha256:other", agent, 1)).not.toBe(k1);
    const other = agentConfigurationDigest({
      models: { implementer: "openai:gpt-4.1-mini" },
      definitions: {},
    });
    expect(cellKey("sha256:pack", other, 1)).not.toBe(k1);
    const q = cellQuery(k1);
    expect(parseQueryId(q).ok).toBe(true);
    expect(q).toBe(`query:eval-${k1.slice(7, 39)}`);
    expect(cellAttemptQuery(k1, 0)).toBe(q);
    expect(cellAttemptQuery(k1, 2)).toBe(`${q}.2`);
  });

  it("names an eval by its set's name and digest", () => {
    const id = evalId("small-bugs", "sha256:ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg");
    expect(id).toBe("eval:small-bugs-ABCDEFGHIJKLMNOP");
    expect(isEvalId(id)).toBe(true);
    expect(isEvalId("eval:x")).toBe(false);
  });
});

describe("pricing", () => {
  it("prices fresh input, cached input and output per million tokens", () => {
    const price = { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 };
    expect(
      costOf({ inputTokens: 1_000_000, outputTokens: 500_000, cachedInputTokens: 200_000 }, price),
    ).toBeCloseTo(0.8 * 2 + 0.2 * 0.5 + 0.5 * 8, 12);
    expect(
      costOf(
        { inputTokens: 1_000_000, outputTokens: 0, cachedInputTokens: 1_000_000 },
        { inputPerMTok: 2, outputPerMTok: 8 },
      ),
    ).toBe(2);
  });

  it("refuses a malformed table at the pointer of the value at fault", () => {
    const r = validatePricing({
      models: { "openai:gpt-4.1": { inputPerMTok: 2, outputPerMTOk: 8 } },
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]?.code).toBe("eval/pricing-invalid");
    expect(r.errors[0]?.path).toBe("/models/openai:gpt-4.1/outputPerMTOk");
    expect(r.errors[0]?.message).toMatch(/outputPerMTok/);
    const neg = validatePricing({ models: { m: { inputPerMTok: -1, outputPerMTok: 1 } } });
    expect(neg.ok ? "" : neg.errors[0]?.path).toBe("/models/m/inputPerMTok");
  });

  it("answers each model's price as given, the cached price only where the table names one", () => {
    const r = validatePricing({
      models: {
        a: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 },
        b: { inputPerMTok: 0, outputPerMTok: 1 },
      },
    });
    expect(r.ok && r.value).toEqual({
      a: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 },
      b: { inputPerMTok: 0, outputPerMTok: 1 },
    });
    expect(r.ok && Object.hasOwn(r.value.b ?? {}, "cachedInputPerMTok")).toBe(false);
  });

  it("checks input, output, then cached price: a number of dollars, finite and not negative", () => {
    const at = (price: Record<string, unknown>) => {
      const r = validatePricing({ models: { m: price } });
      return r.ok ? "ok" : r.errors[0]?.path;
    };
    expect(at({ inputPerMTok: "2", outputPerMTok: -1 })).toBe("/models/m/inputPerMTok");
    expect(at({ inputPerMTok: 2, outputPerMTok: Number.NaN })).toBe("/models/m/outputPerMTok");
    expect(at({ outputPerMTok: 1 })).toBe("/models/m/inputPerMTok");
    expect(at({ inputPerMTok: 1 })).toBe("/models/m/outputPerMTok");
    expect(at({ inputPerMTok: 1, outputPerMTok: 1, cachedInputPerMTok: Infinity })).toBe(
      "/models/m/cachedInputPerMTok",
    );
    expect(at({ inputPerMTok: 1, outputPerMTok: 1, cachedInputPerMTok: null })).toBe(
      "/models/m/cachedInputPerMTok",
    );
    expect(at({ inputPerMTok: 1, outputPerMTok: 1, cachedInputPerMTok: 0 })).toBe("ok");
  });
});

describe("loadEvalSet", () => {
  it("loads the example set: 6 tasks × 2 agents × 3 epochs, each cell a distinct key", async () => {
    const r = await loadEvalSet(path.join(EXAMPLE, "eval-set.json"));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.cells).toHaveLength(36);
    expect(new Set(r.value.cells.map((c) => c.key)).size).toBe(36);
    const median = r.value.cells.find((c) => c.task === "median" && c.agent === "fixer");
    expect(median?.config.models.implementer).toBe(
      `scripted:${path.join(EXAMPLE, "scripts/fixer/median/implementer.jsonl")}`,
    );
    expect(r.value.id).toMatch(/^eval:small-bugs-[A-Za-z0-9_-]{16}$/);
  });

  it("keeps every key when the set gains a task, an agent or an epoch", async () => {
    const doc = JSON.parse(readFileSync(path.join(EXAMPLE, "eval-set.json"), "utf8"));
    const a = await loadEvalSet(path.join(EXAMPLE, "eval-set.json"));
    const edited = {
      ...doc,
      epochs: 4,
      tasks: doc.tasks.map((t: { pack: string; oracle: string }) => ({
        ...t,
        pack: path.join(EXAMPLE, t.pack),
        oracle: path.join(EXAMPLE, t.oracle),
      })),
      agents: [
        ...doc.agents.map((ag: { id: string; models: Record<string, string> }) => ({
          ...ag,
          models: Object.fromEntries(
            Object.entries(ag.models).map(([r, u]) => [
              r,
              `scripted:${path.join(EXAMPLE, u.slice(9))}`,
            ]),
          ),
        })),
        { id: "plain" },
      ],
    };
    const b = await loadEvalSet(setFile(edited, "edited.json"));
    expect(a.ok && b.ok).toBe(true);
    if (!a.ok || !b.ok) return;
    const before = new Set(a.value.cells.map((c) => c.key));
    const after = new Set(b.value.cells.map((c) => c.key));
    for (const k of before) expect(after.has(k)).toBe(true);
    expect(b.value.cells).toHaveLength(6 * 3 * 4);
    expect(b.value.id).not.toBe(a.value.id);
  });

  it("says where malformed JSON breaks (line:column)", async () => {
    const r = await loadEvalSet(
      setFile(undefined, "broken.json", '{\n  "schema": "warrant-eval-set.v1",\n  "name": "x",\n}'),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]?.code).toBe("eval/json");
    expect(r.errors[0]?.line).toBe(4);
  });

  it("locates schema problems at their line and column", async () => {
    const text =
      '{\n  "schema": "warrant-eval-set.v1",\n  "name": "s",\n  "tasks": [],\n  "agents": [{ "id": "a" }]\n}';
    const r = await loadEvalSet(setFile(undefined, "empty-tasks.json", text));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatchObject({ code: "eval/schema", path: "/tasks", line: 4, column: 3 });
  });

  it("refuses a pack, an oracle, a script and a definition that are not there, each at its pointer", async () => {
    const r = await loadEvalSet(
      setFile(
        {
          schema: "warrant-eval-set.v1",
          name: "bad",
          tasks: [
            { id: "gone", pack: "nowhere/task-pack.json" },
            {
              id: "median",
              pack: path.join(EXAMPLE, "tasks/median/task-pack.json"),
              oracle: "no-such.diff",
            },
          ],
          agents: [
            {
              id: "a",
              models: {
                implementer: "scripted:scripts/{task}/implementer.jsonl",
                reviewer: "bogus:x",
              },
              definitions: { summarizer: "agents/{task}.json" },
            },
          ],
        },
        "bad.json",
      ),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((p) => `${p.code} ${p.path}`).sort()).toEqual([
      "eval/definition-missing /agents/0/definitions/summarizer",
      "eval/model-invalid /agents/0/models/reviewer",
      "eval/oracle-missing /tasks/1/oracle",
      "eval/pack-invalid /tasks/0/pack",
      "eval/script-missing /agents/0/models/implementer",
    ]);
    const script = r.errors.find((p) => p.code === "eval/script-missing");
    expect(script?.message).toContain("scripts/median/implementer.jsonl");
    expect(script?.line).toBeGreaterThan(1);
  });

  it("refuses a cost limit when the table does not price a model the set runs on (eval/price-missing)", async () => {
    const pricing = path.join(dir, "pricing.json");
    writeFileSync(
      pricing,
      JSON.stringify({ models: { "openai:gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8 } } }),
    );
    const r = await loadEvalSet(
      setFile(
        {
          schema: "warrant-eval-set.v1",
          name: "priced",
          tasks: [{ id: "median", pack: path.join(EXAMPLE, "tasks/median/task-pack.json") }],
          agents: [
            {
              id: "known",
              models: {
                implementer: "openai:gpt-4.1",
                reviewer: "openai:gpt-4.1",
                summarizer: "openai:gpt-4.1",
              },
            },
            {
              id: "unknown",
              models: {
                implementer: "anthropic:claude-x",
                reviewer: "openai:gpt-4.1",
                summarizer: "openai:gpt-4.1",
              },
            },
          ],
          limits: { costUsd: 1 },
          pricing: "pricing.json",
        },
        "priced.json",
      ),
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((p) => `${p.code} ${p.path}`)).toEqual(["eval/price-missing /agents/1"]);
    expect(r.errors[0]?.message).toContain("anthropic:claude-x");
  });
});
