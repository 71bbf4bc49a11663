// The runtime fixture pack (test/runtime/fixtures) copied into a temporary folder, its paths made
// absolute, so that a test may edit or remove it; and a model that answers with given turns in turn.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ModelFunction } from "../../src/index.js";
import { fixtures } from "../runtime/harness.js";

/** A model function answering `turns` one after the other. */
export function answers(...turns: readonly unknown[]): ModelFunction {
  let next = 0;
  return async () => turns[next++] as never;
}

/** A copy of the fixture pack in a new folder (pushed onto `dirs` for removal); its file. */
export function fixturePackCopy(dirs: string[], prefix = "warrant-pack-"): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  const doc = JSON.parse(readFileSync(path.join(fixtures, "task-pack.json"), "utf8"));
  doc.workspace = path.resolve(fixtures, doc.workspace);
  for (const [role, file] of Object.entries(doc.agents as Record<string, string>))
    doc.agents[role] = path.resolve(fixtures, file);
  const file = path.join(dir, "task-pack.json");
  writeFileSync(file, JSON.stringify(doc));
  return file;
}
