// `npm run build:errors-doc`: writes docs/errors.md, the table of every error code, from the code
// registry (src/core/codes.ts, rendered by src/library/errors-doc.ts, bundled here with esbuild so
// no build is needed first). `--check` writes nothing: it exits 1 when the page is not what would be
// written (test/codes.test.ts runs it); `--page FILE` checks or writes FILE instead.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const at = args.indexOf("--page");
const page = at >= 0 && args[at + 1] !== undefined ? path.resolve(args[at + 1]) : path.join(root, "docs/errors.md");

const bundled = await build({
  entryPoints: [path.join(root, "src/library/errors-doc.ts")],
  bundle: true,
  format: "esm",
  platform: "node",
  write: false,
  logLevel: "error",
});
const source = bundled.outputFiles[0].text;
const { renderErrorsDoc } = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);
const text = renderErrorsDoc();

if (args.includes("--check")) {
  let current;
  try {
    current = readFileSync(page, "utf8");
  } catch {
    current = undefined;
  }
  if (current !== text) {
    const rel = path.relative(process.cwd(), page);
    process.stderr.write(`${rel} ${current === undefined ? "is missing" : "differs from the registry"}: run \`npm run build:errors-doc\`\n`);
    process.exit(1);
  }
} else {
  writeFileSync(page, text);
}
