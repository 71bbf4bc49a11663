// `npm run test:mutation [GROUP...] [-- STRYKER OPTIONS]`: runs Stryker once per group of
// scripts/stryker/groups.mjs (all of them by default), each against its own tests, then merges the
// groups' reports into reports/mutation/mutation.json (Stryker's JSON report format) and
// reports/mutation/mutation.html, and prints each module's score (scripts/stryker/scores.mjs).
// Options after the group names (e.g. `--mutate src/core/loop/bundle.ts`) go to every Stryker run.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GROUPS } from "./groups.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const named = args.filter((a) => !a.startsWith("-") && GROUPS.some((g) => g.name === a));
const passed = args.filter((a) => !named.includes(a));
const unknown = passed.find((a, i) => !a.startsWith("-") && !(passed[i - 1] ?? "").startsWith("-"));
if (unknown !== undefined) {
  console.error(`${unknown} is not a group: ${GROUPS.map((g) => g.name).join(", ")}`);
  process.exit(2);
}
const groups = named.length === 0 ? GROUPS : GROUPS.filter((g) => named.includes(g.name));
const stryker = path.join(root, "node_modules/@stryker-mutator/core/bin/stryker.js");

let failed = false;
for (const g of groups) {
  const started = Date.now();
  console.log(`mutation group ${g.name}: ${g.mutate.join(", ")}`);
  const r = spawnSync(
    process.execPath,
    ["--import", "./scripts/stryker/typescript-api.mjs", stryker, "run", ...passed],
    { cwd: root, stdio: "inherit", env: { ...process.env, MUTATION_GROUP: g.name } },
  );
  console.log(`mutation group ${g.name}: exit ${r.status}, ${Math.round((Date.now() - started) / 1000)} s`);
  if (r.status !== 0) failed = true;
}

// The merged report: every group's files (the latest run of each group).
const merged = { schemaVersion: "2", thresholds: { high: 90, low: 80 }, files: {}, testFiles: {} };
for (const g of GROUPS) {
  const file = path.join(root, "reports/mutation", g.name, "mutation.json");
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, "utf8"));
  merged.schemaVersion = r.schemaVersion ?? merged.schemaVersion;
  Object.assign(merged.files, r.files);
  Object.assign(merged.testFiles, r.testFiles ?? {});
  merged.config ??= r.config;
  merged.framework ??= r.framework;
  merged.projectRoot ??= r.projectRoot;
}
mkdirSync(path.join(root, "reports/mutation"), { recursive: true });
writeFileSync(path.join(root, "reports/mutation/mutation.json"), JSON.stringify(merged));
const elements = readFileSync(
  createRequire(stryker).resolve("mutation-testing-elements/dist/mutation-test-elements.js"),
  "utf8",
);
const json = JSON.stringify(merged).replace(/</g, "\\u003c");
writeFileSync(
  path.join(root, "reports/mutation/mutation.html"),
  `<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>Warrant mutation report</title><script>${elements}</script></head>
<body>
<mutation-test-report-app titlePostfix="Warrant"></mutation-test-report-app>
<script>document.querySelector("mutation-test-report-app").report = ${json};</script>
</body>
</html>
`,
);
spawnSync(process.execPath, [path.join(root, "scripts/stryker/scores.mjs")], { stdio: "inherit" });
process.exit(failed ? 1 : 0);
