import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { contractValidators } from "../src/core/contracts/ajv.js";
import { repoRoot, seedExamplesDir } from "./helpers/cli.js";

const seeds = [
  "agent-definition.v1.schema.json",
  "corpus-task-pack-loop.v1.schema.json",
  "model-turn.schema.json",
];

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** A `sha256sum` listing (`<hex>  <name>` per line) as name → hex. */
function pins(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
    if (m) out.set(m[2] as string, m[1] as string);
  }
  return out;
}

describe("contracts", () => {
  const seedPins = pins(path.join(repoRoot, "contracts/seeds.sha256"));

  it("pins exactly the three seeds", () => {
    expect([...seedPins.keys()].sort()).toEqual(seeds);
  });

  it.each(seeds)("%s is the seed byte for byte (its pinned SHA-256)", (name) => {
    expect(sha256(path.join(repoRoot, "contracts", name))).toBe(seedPins.get(name));
  });

  it("the published seed examples are the ones pinned beside them", () => {
    const examplePins = pins(path.join(seedExamplesDir, "SHA256SUMS"));
    expect(examplePins.size).toBe(2);
    for (const [name, hex] of examplePins) {
      expect(sha256(path.join(seedExamplesDir, name)), name).toBe(hex);
    }
  });

  it("has all three seeds precompiled in strict mode", () => {
    const v = contractValidators();
    expect(typeof v.agentDefinition).toBe("function");
    expect(typeof v.modelTurn).toBe("function");
    expect(typeof v.loop).toBe("function");
  });

  it("gives the same seed validators on every call: never compiled per call", () => {
    const a = contractValidators();
    const b = contractValidators();
    expect(b.agentDefinition).toBe(a.agentDefinition);
    expect(b.modelTurn).toBe(a.modelTurn);
    expect(b.loop).toBe(a.loop);
    // Precompiled, not compiled in this process: an Ajv-compiled function carries its schemaEnv.
    expect("schemaEnv" in a.modelTurn).toBe(false);
  });

  it("resolves the loop seed's relative reference to the reconstructed common schema", () => {
    const { loop } = contractValidators();
    const doc = JSON.parse(
      readFileSync(path.join(seedExamplesDir, "open.corpus-task-pack-loop.json"), "utf8"),
    );
    expect(loop(doc)).toBe(true);
    // deliberationLimits bounds come from the common schema: 0 passages is refused.
    const bad = structuredClone(doc);
    bad.limits["max/passages"] = 0;
    expect(loop(bad)).toBe(false);
    expect(loop.errors?.[0]?.instancePath).toBe("/limits/max~1passages");
    // refusalCode is the closed enum of the common schema.
    const refusal = structuredClone(doc);
    refusal.facts[0].step.limits["max/cycles"] = 101;
    expect(loop(refusal)).toBe(false);
  });

  it("the reconstructed refusal code enum has the 45 codes", async () => {
    const common = JSON.parse(
      readFileSync(path.join(repoRoot, "contracts/operator-task-common.v1.schema.json"), "utf8"),
    );
    expect(common.$defs.refusalCode.enum).toHaveLength(45);
    expect(new Set(common.$defs.refusalCode.enum).size).toBe(45);
  });
});
