import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { contractValidators } from "../src/core/contracts/ajv.js";
import { repoRoot, sharedDir } from "./helpers/cli.js";

const seeds = [
  "agent-definition.v1.schema.json",
  "corpus-task-pack-loop.v1.schema.json",
  "model-turn.schema.json",
];

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("contracts", () => {
  it.each(seeds)("%s is the seed byte for byte", (name) => {
    expect(sha256(path.join(repoRoot, "contracts", name))).toBe(
      sha256(path.join(sharedDir, "seeds", name)),
    );
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
      readFileSync(path.join(sharedDir, "seeds/examples/open.corpus-task-pack-loop.json"), "utf8"),
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
