// Task packs as the command line takes them: a file that is not there is a usage error (2), a pack
// that does not load prints each problem and is invalid (1); and the bundled demo's pack.
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { LoadedPack } from "../index.js";
import { WarrantError } from "../library/basics.js";
import { EXIT_INVALID, err, formatProblem, UsageError } from "./io.js";

/** The package root (where `examples/` lives), found from this file in `src/` or `dist/src/`. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new WarrantError("runtime/package-root", "cannot find the package root");
    dir = up;
  }
  return dir;
}

/** The pack file a command names: the file itself, or a folder's `task-pack.json`. */
export function packFileOf(given: string): string {
  let dir = false;
  try {
    dir = statSync(given).isDirectory();
  } catch {
    return given;
  }
  if (!dir) return given;
  const file = path.join(given, "task-pack.json");
  if (!existsSync(file))
    throw new UsageError(`cannot read ${given}: a folder without task-pack.json`);
  return file;
}

/** A pack file that is not there, or is not a file, is a usage error (2). */
export function requirePackFile(file: string): void {
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
  } catch {
    throw new UsageError(`cannot read ${file}: no such file`);
  }
  if (!isFile) throw new UsageError(`cannot read ${file}: not a file`);
}

export async function loadOrFail(file: string): Promise<LoadedPack | undefined> {
  requirePackFile(file);
  const { loadPack } = await import("../index.js");
  const loaded = await loadPack(file);
  if (loaded.ok) return loaded.value;
  for (const p of loaded.errors) err(formatProblem(file, p));
  process.exitCode = EXIT_INVALID;
  return undefined;
}

export function demoPackFile(): string {
  return path.join(packageRoot(), "examples/fix-failing-test/task-pack.json");
}
