// The mutation score of each module in reports/mutation/mutation.json (Stryker's JSON report):
// killed + timed out over valid mutants (ignored and not compiling left out; survived and not
// covered count against). `--survivors` lists each surviving or uncovered mutant.
// `--markdown` prints the scores as the table of docs/testing.md.
// Usage: node scripts/stryker/scores.mjs [--survivors] [--markdown] [REPORT]
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const survivors = args.includes("--survivors");
const markdown = args.includes("--markdown");
const file = args.find((a) => !a.startsWith("--")) ?? "reports/mutation/mutation.json";
const report = JSON.parse(readFileSync(file, "utf8"));
const rows = [];
for (const [name, f] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
  const n = (s) => f.mutants.filter((m) => m.status === s).length;
  const killed = n("Killed");
  const timedOut = n("Timeout");
  const survived = n("Survived");
  const noCoverage = n("NoCoverage");
  const valid = killed + timedOut + survived + noCoverage + n("RuntimeError");
  const score = valid === 0 ? 100 : (100 * (killed + timedOut)) / valid;
  rows.push({ name, killed, timedOut, survived, noCoverage, valid, score });
  if (survivors) {
    const lines = f.source.split("\n");
    for (const m of f.mutants.filter((x) => x.status === "Survived" || x.status === "NoCoverage")) {
      const at = m.location.start;
      const code = (lines[at.line - 1] ?? "").trim().slice(0, 110);
      console.log(`${name}:${at.line}:${at.column} ${m.status} ${m.mutatorName} -> ${JSON.stringify(m.replacement ?? "").slice(0, 80)}\n    ${code}`);
    }
  }
}
if (markdown) {
  console.log("| Module | Score | Killed | Timed out | Survived | No coverage | Valid |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows)
    console.log(
      `| \`${r.name}\` | ${r.score.toFixed(1)} % | ${r.killed} | ${r.timedOut} | ${r.survived} | ${r.noCoverage} | ${r.valid} |`,
    );
} else for (const r of rows)
  console.log(
    `${r.score.toFixed(1).padStart(6)} %  ${r.name}  (killed ${r.killed}, timed out ${r.timedOut}, survived ${r.survived}, no coverage ${r.noCoverage}, valid ${r.valid})`,
  );
