// Every test file runs with Warrant's config folder (host keys, trusted keys) in a temporary folder
// of its own, never in the real home: the CLI processes a test spawns inherit the environment.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

const dir = mkdtempSync(path.join(tmpdir(), "warrant-config-"));
process.env.XDG_CONFIG_HOME = dir;
delete process.env.WARRANT_KEY_DIR;
afterAll(() => rmSync(dir, { recursive: true, force: true }));
