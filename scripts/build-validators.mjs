// `npm run build:validators`: writes the precompiled (standalone) contract validators into
// src/core/contracts/generated/ from the built generator (src/core/contracts/standalone.ts).
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { standaloneValidators } from "../dist/src/core/contracts/standalone.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dir = path.join(root, "src/core/contracts/generated");
const files = standaloneValidators();
for (const name of readdirSync(dir)) {
  if (!files.has(name)) rmSync(path.join(dir, name));
}
for (const [name, text] of files) writeFileSync(path.join(dir, name), text);
process.stderr.write(`build:validators: wrote ${[...files.keys()].join(", ")}\n`);
