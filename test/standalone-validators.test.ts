// The precompiled validators in src/core/contracts/generated are exactly what the generator makes
// from contracts/ today (run `npm run build:validators` when this fails), and they judge documents
// as validators compiled at run time by the same factory do.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { contractValidators, createAjv } from "../src/core/contracts/ajv.js";
import { validate as taskPack } from "../src/core/contracts/generated/task-pack.js";
import {
  modelTurnSchema,
  operatorTaskCommonSchema,
  taskPackSchema,
} from "../src/core/contracts/schemas.js";
import { standaloneValidators } from "../src/core/contracts/standalone.js";
import { PAYLOAD_SCHEMAS, payloadValidators } from "../src/core/turn/payload-schemas.js";
import { repoRoot, seedExamplesDir } from "./helpers/cli.js";

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
      readFileSync(path.join(seedExamplesDir, "open.corpus-task-pack-loop.json"), "utf8"),
    );
    const { loop } = contractValidators();
    expect(loop(doc)).toBe(true);
    // Formats are checked (date-time comes from ajv-formats, loaded on first use).
    expect(loop({ ...doc, deadline: "2026-02-30T25:00:00Z" })).toBe(false);
    expect(loop.errors?.map((e) => [e.instancePath, e.keyword])).toContainEqual([
      "/deadline",
      "format",
    ]);
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

describe("the precompiled task-pack validator", () => {
  it("judges the example packs and broken ones as the run-time compiled schema does", () => {
    const ajv = createAjv("contract");
    ajv.addSchema(operatorTaskCommonSchema);
    const compiled = ajv.compile(taskPackSchema);
    const examples = readdirSync(path.join(repoRoot, "examples"))
      .map((d) => path.join(repoRoot, "examples", d, "task-pack.json"))
      .filter((f) => existsSync(f))
      .map((f) => JSON.parse(readFileSync(f, "utf8")) as Record<string, unknown>);
    expect(examples.length).toBeGreaterThan(0);
    const [first] = examples as [Record<string, unknown>];
    const broken: unknown[] = [
      { ...first, nmae: "typo" },
      { ...first, limits: { ...(first.limits as object), maxTurns: -1 } },
      { ...first, commands: { "run-tests": { effect: "sideways" } } },
      { ...first, name: 7, task: undefined },
      [],
      "not a pack",
    ];
    for (const doc of [...examples, ...broken]) {
      const verdict = compiled(doc);
      expect(taskPack(doc)).toBe(verdict);
      expect(taskPack.errors ?? null).toEqual(compiled.errors ?? null);
    }
    expect(examples.every((doc) => taskPack(doc))).toBe(true);
    expect(broken.some((doc) => taskPack(doc))).toBe(false);
  });
});

/** Every source file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : /\.(ts|mjs)$/.test(e.name) ? [p] : [];
  });
}

/** Files that import an Ajv constructor (or ajv-formats) outside the one factory. */
function ajvBuilders(files: readonly string[]): string[] {
  const allowed = new Set(["src/core/contracts/ajv-factory.ts"]);
  const constructors = /from\s+["'](ajv|ajv\/dist\/(2020|2019|ajv|jtd)(\.js)?|ajv-formats)["']/;
  return files
    .map((f) => path.relative(repoRoot, f))
    .filter(
      (f) => !allowed.has(f) && constructors.test(readFileSync(path.join(repoRoot, f), "utf8")),
    );
}

describe("one Ajv factory", () => {
  it("no module but the factory imports an Ajv constructor", () => {
    const files = ["src", "test", "bench/suites", "scripts"].flatMap((d) =>
      sources(path.join(repoRoot, d)),
    );
    expect(ajvBuilders(files)).toEqual([]);
  });

  it("the check names a module that builds its own Ajv", () => {
    const dir = mkdtempSync(path.join(repoRoot, "test/.ajv-builder-"));
    try {
      const file = path.join(dir, "x.ts");
      // Assembled, so this file does not itself match the check.
      writeFileSync(file, `import Ajv2020 from "${"ajv/dist/2020"}.js";\n`);
      expect(ajvBuilders([file])).toEqual([path.relative(repoRoot, file)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Which Ajv modules a fresh process has loaded after running `body` against the built modules
 * (`npm test` builds first, as the CLI tests need).
 */
function ajvLoadedAfter(body: string): string[] {
  const dist = JSON.stringify(path.join(repoRoot, "dist/src"));
  const program = [
    'import { createRequire } from "node:module";',
    `const dist = ${dist};`,
    body,
    "const cache = Object.keys(createRequire(import.meta.url).cache);",
    "process.stdout.write(JSON.stringify(cache.filter((k) => /node_modules\\/ajv\\/dist\\/(2020|ajv|core)\\.js$/.test(k))));",
  ].join("\n");
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", program], {
    encoding: "utf8",
    cwd: repoRoot,
  });
  if (child.status !== 0) throw new Error(child.stderr);
  return JSON.parse(child.stdout) as string[];
}

describe("Ajv is loaded only to compile", () => {
  it("checking a definition and a turn with no tools loads no Ajv", () => {
    const loaded = ajvLoadedAfter(`
      const { validateDefinition } = await import(dist + "/core/definition/validate.js");
      const { validateTurn } = await import(dist + "/core/turn/validate-turn.js");
      const { createToolRegistry } = await import(dist + "/core/turn/tool-registry.js");
      const fs = await import("node:fs");
      const def = validateDefinition(fs.readFileSync("examples/agents/implementer.json", "utf8"));
      if (!def.ok) throw new Error("definition invalid");
      const registry = createToolRegistry([]);
      const turn = { kind: "message", summary: "s", tool_calls: [], message: { type: "Finding",
        payload_json: JSON.stringify({ severity: "info", claim: "c", evidence: [] }), paper_ref: null } };
      if (!validateTurn(turn, { registry: registry.value }).ok) throw new Error("turn invalid");
    `);
    expect(loaded).toEqual([]);
  });

  it("compiling a tool's input schema loads it", () => {
    const loaded = ajvLoadedAfter(`
      const { createToolRegistry } = await import(dist + "/core/turn/tool-registry.js");
      const r = createToolRegistry([{ name: "t.x", description: "d", effect: "observation",
        inputSchema: { type: "object", properties: { a: { type: "integer", minimum: 0 } } } }]);
      if (!r.ok) throw new Error("registry invalid");
    `);
    expect(loaded.length).toBeGreaterThan(0);
  });

  it("loading a pack whose argument schemas are plain loads none, until arguments are refused", () => {
    const pack = `
      const { validateTaskPack } = await import(dist + "/core/taskpack/validate-task-pack.js");
      const fs = await import("node:fs");
      const doc = JSON.parse(fs.readFileSync("examples/fix-config/task-pack.json", "utf8"));
      const r = validateTaskPack(doc);
      if (!r.ok) throw new Error("pack invalid");
      const profile = r.value.commands.get("run-tests");
      if (!profile.validateArgs({}).ok) throw new Error("arguments refused");
    `;
    expect(ajvLoadedAfter(pack)).toEqual([]);
    const refused = ajvLoadedAfter(`${pack}
      if (profile.validateArgs({ extra: 1 }).ok) throw new Error("arguments accepted");
    `);
    expect(refused.length).toBeGreaterThan(0);
  });

  it("a tool's plain input schema is compiled only when it first refuses arguments", () => {
    const registry = `
      const { createToolRegistry } = await import(dist + "/core/turn/tool-registry.js");
      const r = createToolRegistry([{ name: "t.x", description: "d", effect: "observation",
        inputSchema: { type: "object", properties: { a: { type: "integer" } } } }]);
      if (!r.ok) throw new Error("registry invalid");
      const validate = r.value.get("t.x").validate;
      if (!validate({ a: 1 })) throw new Error("arguments refused");
    `;
    expect(ajvLoadedAfter(registry)).toEqual([]);
    const refused = ajvLoadedAfter(`${registry}
      if (validate({ a: "one" })) throw new Error("arguments accepted");
    `);
    expect(refused.length).toBeGreaterThan(0);
  });
});
