// Long arrays in input documents: `loop check` of a loop document whose `facts` array has n invalid
// elements and `definition validate` of a definition whose `models` array has n, for n up to 1 M
// (a 2 MB file), and of valid definitions of many models. Time per element stays flat as n grows
// (Ajv alone, measured at small n in the same run, grows with n), and the peak memory of a fresh
// process is given against the input's size.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { validateDefinition } from "../../src/core/definition/validate.js";
import { checkLoopDocument } from "../../src/core/loop/check.js";
import { median, round } from "../util.js";
import type { BenchSuite } from "./index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const SIZES = [32_000, 128_000, 1_000_000];

const factsText = (n: number) =>
  `{"schema":"corpus-task-pack-loop.v1","facts":[${new Array(n).fill("0").join(",")}]}`;
const modelsText = (n: number) => `{"models":[${new Array(n).fill("0").join(",")}]}`;
/** A valid definition of n models, each in the array spelling (about 16 bytes a model). */
const validModelsText = (n: number) =>
  JSON.stringify({
    schema: "viper/agent-definition/v1",
    name: "n",
    framework: { name: "f" },
    models: Array.from({ length: n }, (_, i) => ["p", `m${i}`]),
  });

function medianMs(fn: () => void, repeats = 3): number {
  const ms: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    fn();
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

/** Peak RSS growth of a fresh process that reads and checks `file` (modules loaded beforehand). */
function peakGrowth(kind: "loop" | "definition", file: string): number {
  const check = path.resolve(here, "../../src/core/loop/check.js");
  const definition = path.resolve(here, "../../src/core/definition/validate.js");
  const ajv = path.resolve(here, "../../src/core/contracts/ajv.js");
  const program = `
    import { readFileSync } from "node:fs";
    const { checkLoopDocument } = await import(${JSON.stringify(check)});
    const { validateDefinition } = await import(${JSON.stringify(definition)});
    const { contractValidators } = await import(${JSON.stringify(ajv)});
    contractValidators().loop; contractValidators().agentDefinition;
    // Compiled before measuring: the validators of split arrays' items are made on first use.
    const zeros = new Array(300).fill(0);
    checkLoopDocument({ facts: zeros }); validateDefinition(JSON.stringify({ models: zeros }));
    const before = process.memoryUsage().rss;
    const text = readFileSync(${JSON.stringify(file)}, "utf8");
    ${kind === "loop" ? "checkLoopDocument(JSON.parse(text));" : "validateDefinition(text);"}
    process.stdout.write(String(process.resourceUsage().maxRSS * 1024 - before));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", program], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`memory probe failed: ${r.stderr}`);
  return Number(r.stdout);
}

export const inputSuite: BenchSuite = {
  name: "input",
  async run() {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-bench-input-"));
    try {
      contractValidators().loop;
      contractValidators().agentDefinition;
      const rows = SIZES.map((n) => {
        const facts = factsText(n);
        const models = modelsText(n);
        const loopMs = medianMs(() => checkLoopDocument(JSON.parse(facts)));
        const definitionMs = medianMs(() => validateDefinition(models));
        const factsFile = path.join(dir, `facts-${n}.json`);
        const modelsFile = path.join(dir, `models-${n}.json`);
        writeFileSync(factsFile, facts);
        writeFileSync(modelsFile, models);
        const loopPeak = peakGrowth("loop", factsFile);
        const definitionPeak = peakGrowth("definition", modelsFile);
        return {
          elements: n,
          inputBytes: facts.length,
          loopCheckMs: round(loopMs),
          loopCheckNsPerElement: round((loopMs * 1e6) / n),
          loopPeakRssGrowthBytes: loopPeak,
          loopPeakOverInput: round(loopPeak / facts.length),
          definitionValidateMs: round(definitionMs),
          definitionNsPerElement: round((definitionMs * 1e6) / n),
          definitionPeakRssGrowthBytes: definitionPeak,
          definitionPeakOverInput: round(definitionPeak / models.length),
        };
      });
      // Valid elements go through every stage (spellings, schema, rules, content ID).
      const valid = [62_500, 250_000].map((n) => {
        const text = validModelsText(n);
        const file = path.join(dir, `valid-${n}.json`);
        writeFileSync(file, text);
        const ms = medianMs(() => validateDefinition(text), 1);
        const peak = peakGrowth("definition", file);
        return {
          elements: n,
          inputBytes: text.length,
          definitionValidateMs: round(ms),
          nsPerElement: round((ms * 1e6) / n),
          peakRssGrowthBytes: peak,
          peakOverInput: round(peak / text.length),
        };
      });
      // Ajv alone on the same shape, where it is still affordable: per-element time grows with n.
      const validate = contractValidators().loop;
      const ajvAlone = [2_000, 8_000].map((n) => {
        const doc = JSON.parse(factsText(n)) as unknown;
        const ms = medianMs(() => validate(doc));
        return { elements: n, ms: round(ms), nsPerElement: round((ms * 1e6) / n) };
      });
      const first = rows[0];
      const last = rows.at(-1);
      return {
        rows,
        valid,
        ajvAlone,
        perElementGrowth: {
          linear:
            first && last ? round(last.loopCheckNsPerElement / first.loopCheckNsPerElement) : null,
          ajvAlone: round(
            (ajvAlone[1]?.nsPerElement ?? 0) / Math.max(ajvAlone[0]?.nsPerElement ?? 1, 1e-9),
          ),
        },
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
