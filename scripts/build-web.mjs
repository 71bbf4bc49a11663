// Bundles the console's UI (web/) into dist/web/ with esbuild: one script, its stylesheet and the
// page, served by `warrant serve`. No CDN: everything the page loads is in this folder.
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist/web");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [path.join(root, "web/main.ts")],
  bundle: true,
  format: "iife",
  target: "es2022",
  minify: true,
  sourcemap: false,
  outfile: path.join(out, "app.js"),
  logLevel: "warning",
});
for (const f of ["index.html", "app.css"]) copyFileSync(path.join(root, "web", f), path.join(out, f));
