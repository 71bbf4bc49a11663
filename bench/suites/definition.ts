// Agent definitions and CIDs: validate + ID of the example implementer and of a large definition,
// linear scaling of a multi-MiB definition, the pipeline against Ajv alone, and the collection CID
// of a 50 MiB directory against raw BLAKE3 of the same bytes.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { collectionCidOfPath } from "../../src/adapters/fs/collection-files.js";
import { blake3Digest } from "../../src/core/cid/cid.js";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { readDefinition } from "../../src/core/definition/read.js";
import { validateDefinition } from "../../src/core/definition/validate.js";
import { measureSync, median, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const MiB = 1 << 20;

function mustValidate(text: string): void {
  const r = validateDefinition(text);
  if (!r.ok)
    throw new Error(`bench definition is invalid: ${JSON.stringify(r.errors.slice(0, 3))}`);
}

/** 256 tools with distinct input schemas and 64 sub-agents. */
function largeDefinition(): string {
  const tools = Array.from({ length: 256 }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool number ${i}: reads and reports.`,
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", maxLength: 4096 },
        [`option_${i}`]: { type: "integer", minimum: 0, maximum: 1000 + i },
        mode: { enum: ["fast", "slow"] },
      },
      required: ["path"],
      additionalProperties: false,
    },
  }));
  const subAgents = Array.from({ length: 64 }, (_, i) => ({
    schema: "viper/agent-definition/v1",
    name: `sub-${i}`,
    description: `Sub-agent ${i}.`,
    framework: { name: "warrant" },
    models: [{ provider: "scripted", model: `sub/${i}` }],
    prompts: [{ role: "system", content: `You are sub-agent ${i}.` }],
  }));
  return JSON.stringify({
    schema: "viper/agent-definition/v1",
    name: "large",
    framework: { name: "warrant" },
    models: [{ provider: "scripted", model: "large" }],
    tools,
    subAgents,
  });
}

/** A definition of about `bytes` bytes, carried in extensions (strings, numbers, nesting). */
function sizedDefinition(bytes: number): string {
  const items: unknown[] = [];
  const item = (i: number) => ({
    id: i,
    label: `item ${i} \u00e9\u4e2d`,
    weight: i / 7,
    tags: ["a", "b"],
    ok: true,
  });
  const one = JSON.stringify(item(123456)).length + 1;
  for (let i = 0; i < Math.ceil(bytes / one); i++) items.push(item(i));
  return JSON.stringify({
    schema: "viper/agent-definition/v1",
    name: "sized",
    framework: { name: "warrant" },
    models: [{ provider: "scripted", model: "sized" }],
    extensions: { data: items },
  });
}

async function collectionBench(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), "warrant-bench-collection-"));
  try {
    const chunks: Uint8Array[] = [];
    let total = 0;
    let seed = 1;
    const fill = (n: number) => {
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        seed = (seed * 1103515245 + 12345) >>> 0;
        b[i] = seed >>> 24;
      }
      return b;
    };
    // 45 files of 1 MiB, 1 of 4 MiB and 1 024 small ones (1 KiB) in nested directories: 50 MiB.
    const files: Array<[string, number]> = [];
    for (let i = 0; i < 45; i++) files.push([`big/part-${i}.bin`, MiB]);
    files.push(["huge.bin", 4 * MiB]);
    for (let i = 0; i < 1024; i++) files.push([`small/${i % 16}/.f-${i}`, 1024]);
    for (const [name, size] of files) {
      const bytes = fill(size);
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), bytes);
      chunks.push(bytes);
      total += size;
    }
    const all = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    // Interleaved pairs, so that load from elsewhere on the machine weighs on both sides alike.
    await collectionCidOfPath(dir);
    blake3Digest(all);
    const pairs: Array<{ coll: number; raw: number }> = [];
    for (let r = 0; r < 7; r++) {
      let t = performance.now();
      await collectionCidOfPath(dir);
      const coll = performance.now() - t;
      t = performance.now();
      blake3Digest(all);
      pairs.push({ coll, raw: performance.now() - t });
    }
    const mb = total / 1e6;
    const collMs = median(pairs.map((p) => p.coll));
    const rawMs = median(pairs.map((p) => p.raw));
    return {
      bytes: total,
      files: files.length,
      collectionMs: round(collMs),
      collectionMBps: round(mb / (collMs / 1000)),
      rawBlake3Ms: round(rawMs),
      rawBlake3MBps: round(mb / (rawMs / 1000)),
      ratioToRaw: round(median(pairs.map((p) => p.raw / p.coll)), 3),
      target: "ratioToRaw ≥ 0.8 (median of interleaved pairs)",
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Times `a` and `b` in interleaved pairs; the median of the per-pair ratios b/a. */
function pairedRatio(a: () => unknown, b: () => unknown, repeats = 9) {
  a();
  b();
  const pairs: Array<{ a: number; b: number }> = [];
  for (let r = 0; r < repeats; r++) {
    let t = performance.now();
    a();
    const ta = performance.now() - t;
    t = performance.now();
    b();
    pairs.push({ a: ta, b: performance.now() - t });
  }
  return {
    aMs: median(pairs.map((p) => p.a)),
    bMs: median(pairs.map((p) => p.b)),
    ratio: round(median(pairs.map((p) => p.b / p.a)), 3),
  };
}

export const definitionSuite: BenchSuite = {
  name: "definition",
  async run() {
    const implementer = readFileSync(
      path.join(repoRoot, "examples/agents/implementer.json"),
      "utf8",
    );
    mustValidate(implementer);
    const pipeline = measureSync(() => validateDefinition(implementer), { iterations: 2000 });
    const parsed = JSON.parse(implementer);
    const ajv = contractValidators().agentDefinition;
    const ajvAlone = measureSync(() => ajv(parsed), { iterations: 20000 });
    const floor = measureSync(() => ajv(JSON.parse(implementer)), { iterations: 20000 });

    const large = largeDefinition();
    const t0 = performance.now();
    mustValidate(large);
    const largeColdMs = performance.now() - t0;
    const largeWarm = measureSync(() => validateDefinition(large), {
      iterations: 10,
      repeats: 5,
      warmup: 2,
    });
    const largeParsed = JSON.parse(large);
    const largeAjv = measureSync(() => ajv(largeParsed), { iterations: 50, repeats: 5, warmup: 5 });

    const small = sizedDefinition(2.5 * MiB);
    const big = sizedDefinition(5 * MiB);
    mustValidate(small);
    mustValidate(big);
    const scaling = pairedRatio(
      () => validateDefinition(small),
      () => validateDefinition(big),
    );
    const reader = pairedRatio(
      () => readDefinition(small),
      () => readDefinition(big),
    );
    const bigParse = measureSync(() => JSON.parse(big), { iterations: 1, repeats: 7, warmup: 2 });

    return {
      implementer: {
        validateAndIdUs: pipeline.medianUs,
        p95Us: pipeline.p95Us,
        target: "≤ 200 µs/definition",
        ajvAloneUs: ajvAlone.medianUs,
        jsonParsePlusAjvUs: floor.medianUs,
        pipelineOverAjv: round(pipeline.medianUs / ajvAlone.medianUs),
      },
      large: {
        tools: 256,
        subAgents: 64,
        bytes: large.length,
        firstValidateMs: round(largeColdMs),
        validateAndIdMs: round(largeWarm.medianUs / 1000),
        ajvAloneMs: round(largeAjv.medianUs / 1000),
        pipelineOverAjv: round(largeWarm.medianUs / largeAjv.medianUs),
      },
      scaling: {
        smallBytes: small.length,
        bigBytes: big.length,
        smallMs: round(scaling.aMs),
        bigMs: round(scaling.bMs),
        ratio: scaling.ratio,
        sizeRatio: round(big.length / small.length, 3),
        bigMBps: round(big.length / 1e6 / (scaling.bMs / 1000)),
        readerSmallMs: round(reader.aMs),
        readerBigMs: round(reader.bMs),
        readerRatio: reader.ratio,
        readerBigMBps: round(big.length / 1e6 / (reader.bMs / 1000)),
        jsonParseBigMs: round(bigParse.medianUs / 1000),
      },
      collection: await collectionBench(),
    };
  },
};
