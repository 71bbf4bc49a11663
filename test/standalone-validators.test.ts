// The precompiled validators in src/core/contracts/generated are exactly what the generator makes
// from contracts/ today (run `npm run build:validators` when this fails), and they judge documents
// as validators compiled at run time by the same factory do.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { contractValidators, createAjv } from "../src/core/contracts/ajv.js";
import { modelTurnSchema } from "../src/core/contracts/schemas.js";
import { standaloneValidators } from "../src/core/contracts/standalone.js";
import { PAYLOAD_SCHEMAS, payloadValidators } from "../src/core/turn/payload-schemas.js";
import { repoRoot, sharedDir } from "./helpers/cli.js";

const GENERATED = path.join(repoRoot, "src/core/contracts/generated");

/** Files in `dir` that differ from, lack, or are not among the generator's files. */
function staleFiles(dir: string, expected: ReadonlyMap<string, string>): string[] {
  const present = new Set(readdirSync(dir));
  const stale: string[] = [];
  for (const [name, text] of expected) {
    if (!present.has(name)) stale.push(`${name} (missing)`);
    else if (readFileSync(path.join(dir, name), "utf8") !== text) stale.push(`${name} (differs)`);
  }
  for (const name of present) if (!expected.has(name)) stale.push(`${name} (not generated)`);
  return stale;
}

describe("precompiled validators", () => {
  const expected = standaloneValidators();

  it("are current: regenerate with `npm run build:validators`", () => {
    expect(staleFiles(GENERATED, expected)).toEqual([]);
  });

  it("the check names a changed, a missing and a foreign file", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-generated-"));
    try {
      cpSync(GENERATED, dir, { recursive: true });
      writeFileSync(path.join(dir, "model-turn.ts"), "// edited by hand\n");
      rmSync(path.join(dir, "loop.ts"));
      writeFileSync(path.join(dir, "extra.ts"), "");
      expect(staleFiles(dir, expected).sort()).toEqual([
        "extra.ts (not generated)",
        "loop.ts (missing)",
        "model-turn.ts (differs)",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("judge turns as the run-time compiled seed does, errors included", () => {
    const compiled = createAjv("contract").compile(modelTurnSchema);
    const { modelTurn } = contractValidators();
    const turns: unknown[] = [
      { kind: "message", summary: "s", tool_calls: [], message: null },
      { kind: "tool_calls", summary: "s", tool_calls: [{ name: "Bad", arguments_json: "{}" }] },
      { kind: "message", summary: 1, tool_calls: [], message: { type: "Nope" }, extra: true },
      "not an object",
    ];
    for (const t of turns) {
      expect(modelTurn(t)).toBe(compiled(t));
      expect(modelTurn.errors ?? null).toEqual(compiled.errors ?? null);
    }
  });

  it("judge the published loop example and payloads as compiled ones do", () => {
    const doc = JSON.parse(
      readFileSync(path.join(sharedDir, "seeds/examples/open.corpus-task-pack-loop.json"), "utf8"),
    );
    expect(contractValidators().loop(doc)).toBe(true);
    const payloads = payloadValidators();
    // Payload schemas refer to one another by `$id`: compiled together, as before.
    const ajv = createAjv("contract");
    for (const schema of Object.values(PAYLOAD_SCHEMAS)) ajv.addSchema(schema);
    for (const [type, schema] of Object.entries(PAYLOAD_SCHEMAS)) {
      const compiled = ajv.getSchema((schema as { $id: string }).$id);
      if (compiled === undefined) throw new Error(`${type} did not compile`);
      const validate = payloads[type as keyof typeof payloads];
      for (const p of [{}, { summary: "x", outcome: "done", evidence: [] }, { claim: 1 }]) {
        expect(validate(p)).toBe(compiled(p));
        expect(validate.errors ?? null).toEqual(compiled.errors ?? null);
      }
    }
  });
});
