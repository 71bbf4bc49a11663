// `npm run bench [-- SUITE…]`: runs the benchmark suites and prints one JSON object on stdout.
// Progress goes to stderr so stdout stays machine-readable.
import os from "node:os";
import { suites } from "./suites/index.js";
import { targetRows } from "./targets.js";

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const chosen = suites.filter((s) => wanted.length === 0 || wanted.includes(s.name));
if (chosen.length === 0) {
  process.stderr.write(`unknown suite; available: ${suites.map((s) => s.name).join(", ")}\n`);
  process.exitCode = 2;
} else {
  const results: Record<string, unknown> = {};
  for (const suite of chosen) {
    process.stderr.write(`bench: ${suite.name}…\n`);
    const t0 = Date.now();
    try {
      results[suite.name] = await suite.run();
    } catch (e) {
      results[suite.name] = { error: (e as Error).message };
      process.exitCode = 1;
    }
    process.stderr.write(
      `bench: ${suite.name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
    );
  }
  const report = {
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
    },
    at: new Date().toISOString(),
    results,
    // Every target read off this run, beside its same-run reference.
    targets: targetRows(results),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}
