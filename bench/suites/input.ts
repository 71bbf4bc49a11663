// Long arrays in input documents: `loop check` of a loop document whose `facts` array has n invalid
// elements and `definition validate` of a definition whose `models` array has n, for n up to 1 M
// (a 2 MB file), and of valid definitions of many models, the largest as large as a command reads
// (16 MiB, `--max-bytes`' default). Time per element stays flat as n grows (Ajv alone, measured at
// small n in the same run, grows with n), and the peak memory of a fresh process is given against
// the input's size. With WARRANT_BENCH_BASELINE naming another build's `dist/src` (the main
// branch's, say), every memory probe also runs on that build, interleaved, in the same run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { DEFAULT_MAX_INPUT_BYTES } from "../../src/cli/io.js";
import { contractValidators } from "../../src/core/contracts/ajv.js";
import { validateDefinition } from "../../src/core/definition/validate.js";
import { checkLoopDocument } from "../../src/core/loop/check.js";
import { median, PEAK_RSS_SOURCE, round } from "../util.js";
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

/** `validModelsText(n).length`, without making the text: each model is `["p","m<i>"]` and a comma. */
function validLength(n: number): number {
  let digits = 0;
  for (let from = 0, width = 1; from < n; from = 10 ** width, width++) {
    digits += (Math.min(n, 10 ** width) - from) * width;
  }
  return validModelsText(0).length + n * 10 + digits - (n > 0 ? 1 : 0);
}

/** The most models whose valid definition fits in `bytes` (the largest input a command reads). */
function largestValid(bytes: number): { n: number; text: string } {
  let lo = 0;
  let hi = bytes;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (validLength(mid) <= bytes) lo = mid;
    else hi = mid - 1;
  }
  const text = validModelsText(lo);
  if (text.length !== validLength(lo)) throw new Error("validLength disagrees with the text");
  return { n: lo, text };
}

function medianMs(fn: () => void, repeats = 3): number {
  const ms: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    fn();
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

interface Probe {
  /** Peak RSS growth of the fresh process, from before the file is read. */
  readonly peak: number;
  /** CPU time (user + system) of reading and checking, in ms. */
  readonly cpuMs: number;
}

/**
 * A fresh process of the build whose `dist/src` is `src` reads and checks `file` (modules loaded
 * and validators compiled beforehand): its peak RSS growth and CPU time.
 */
function probe(src: string, kind: "loop" | "definition", file: string): Probe {
  const check = path.join(src, "core/loop/check.js");
  const definition = path.join(src, "core/definition/validate.js");
  const ajv = path.join(src, "core/contracts/ajv.js");
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
    const cpu = process.cpuUsage();
    const text = readFileSync(${JSON.stringify(file)}, "utf8");
    ${kind === "loop" ? "checkLoopDocument(JSON.parse(text));" : "validateDefinition(text);"}
    const used = process.cpuUsage(cpu);
    ${PEAK_RSS_SOURCE}
    process.stdout.write(JSON.stringify({
      peak: peakRssBytes() - before,
      cpuMs: (used.user + used.system) / 1000,
    }));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", program], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`memory probe failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Probe;
}

const ours = path.resolve(here, "../../src");

/** This build's probe and, when a baseline build is named, that build's (run just before). */
function probes(
  baseline: string | undefined,
  kind: "loop" | "definition",
  file: string,
): { ours: Probe; baseline?: Probe } {
  const other = baseline === undefined ? undefined : probe(baseline, kind, file);
  return { ours: probe(ours, kind, file), ...(other === undefined ? {} : { baseline: other }) };
}

/** The baseline's figures beside ours, as ratios to the input's size. */
function baselineFigures(p: Probe | undefined, bytes: number): Record<string, number> {
  if (p === undefined) return {};
  return {
    baselinePeakRssGrowthBytes: p.peak,
    baselinePeakOverInput: round(p.peak / bytes),
    baselineProbeCpuMs: round(p.cpuMs),
  };
}

/** `baselinePeakOverInput` → `loopBaselinePeakOverInput`, and so on. */
function prefixed(prefix: string, figures: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(figures).map(([k, v]) => [`${prefix}${k[0]?.toUpperCase()}${k.slice(1)}`, v]),
  );
}

export const inputSuite: BenchSuite = {
  name: "input",
  async run() {
    const dir = mkdtempSync(path.join(tmpdir(), "warrant-bench-input-"));
    const named = process.env.WARRANT_BENCH_BASELINE;
    const baseline = named === undefined || named === "" ? undefined : path.resolve(named);
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
        const loop = probes(baseline, "loop", factsFile);
        const definition = probes(baseline, "definition", modelsFile);
        return {
          elements: n,
          inputBytes: facts.length,
          loopCheckMs: round(loopMs),
          loopCheckNsPerElement: round((loopMs * 1e6) / n),
          loopPeakRssGrowthBytes: loop.ours.peak,
          loopPeakOverInput: round(loop.ours.peak / facts.length),
          ...prefixed("loop", baselineFigures(loop.baseline, facts.length)),
          definitionValidateMs: round(definitionMs),
          definitionNsPerElement: round((definitionMs * 1e6) / n),
          definitionPeakRssGrowthBytes: definition.ours.peak,
          definitionPeakOverInput: round(definition.ours.peak / models.length),
          ...prefixed("definition", baselineFigures(definition.baseline, models.length)),
        };
      });
      // Valid elements go through every stage (spellings, schema, rules, content ID); the last
      // is the largest input a command reads.
      const largest = largestValid(DEFAULT_MAX_INPUT_BYTES);
      const valid = [62_500, 250_000, largest.n].map((n) => {
        const text = n === largest.n ? largest.text : validModelsText(n);
        const file = path.join(dir, `valid-${n}.json`);
        writeFileSync(file, text);
        const ms = medianMs(() => validateDefinition(text), 1);
        const p = probes(baseline, "definition", file);
        return {
          elements: n,
          inputBytes: text.length,
          definitionValidateMs: round(ms),
          nsPerElement: round((ms * 1e6) / n),
          probeCpuNsPerElement: round((p.ours.cpuMs * 1e6) / n),
          peakRssGrowthBytes: p.ours.peak,
          peakOverInput: round(p.ours.peak / text.length),
          ...baselineFigures(p.baseline, text.length),
          ...(p.baseline === undefined
            ? {}
            : { baselineProbeCpuNsPerElement: round((p.baseline.cpuMs * 1e6) / n) }),
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
          // CPU time per model of the fresh processes: the largest valid input over the smallest.
          valid: round(
            (valid.at(-1)?.probeCpuNsPerElement ?? 0) /
              Math.max(valid[0]?.probeCpuNsPerElement ?? 1, 1e-9),
          ),
        },
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
