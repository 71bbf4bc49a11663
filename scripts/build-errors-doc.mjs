// `npm run build:errors-doc`: writes docs/errors.md, the table of every error code, from the code
// registry (src/core/codes.ts) as built into dist/ (`npm run build` first; the npm script does).
// `--check` writes nothing: it exits 1 when docs/errors.md is not what would be written.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const PAGE = path.join(root, "docs/errors.md");
const { renderErrorsDoc } = await import(path.join(root, "dist/src/library/errors-doc.js"));

const text = renderErrorsDoc();
if (process.argv.includes("--check")) {
  let current = "";
  try {
    current = readFileSync(PAGE, "utf8");
  } catch {
    current = "";
  }
  if (current !== text) {
    process.stderr.write("docs/errors.md differs from the registry: run `npm run build:errors-doc`\n");
    process.exit(1);
  }
} else {
  writeFileSync(PAGE, text);
}
