// A baseline folder and an environments folder for profile tools on the real backend, made so a
// contained command running as another uid can reach its environment; removed after the file.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

export function containedBaseline(label: string): { baseline: string; envRoot: string } {
  const base = mkdtempSync(path.join(tmpdir(), `warrant-${label}-`));
  const baseline = path.join(base, "baseline");
  const envRoot = path.join(base, "envs");
  mkdirSync(baseline);
  mkdirSync(envRoot);
  // Contained commands may run as another uid: it must reach its environment's directory.
  chmodSync(base, 0o711);
  chmodSync(envRoot, 0o711);
  writeFileSync(path.join(baseline, "note.txt"), "original\n");
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  return { baseline, envRoot };
}
