// `npm run test:long`: 100 000 one-byte files at the default bounds (50 000 changed entries, 30 s
// of change capture) on each backend: the run concludes verified, its changeset incomplete
// (`environment/too-many-changes`) and within the record's 8 MiB, and nothing is left in TMPDIR.
// The same case with a small bound runs in the main suite (interrupt-run.test.ts).
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import { CHANGESET_MAX_BYTES, type ChangesetBody } from "../../src/runtime/changeset.js";
import { runCli } from "../helpers/cli.js";
import { commandModels, commandPack } from "./command-pack.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const WRITE =
  'const fs = require("fs"); fs.mkdirSync("src/many"); for (let i = 0; i < 100000; i++) fs.writeFileSync("src/many/f" + i, "x");';

for (const backend of ["bwrap", "unshare"] as const) {
  const found = await detectSandbox({ only: backend });
  describe.skipIf(!found.ok)(`100 000 files at the default bounds: ${backend}`, () => {
    it("the run concludes with an incomplete changeset within its bound", async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), "warrant-many-"));
      dirs.push(cwd);
      const temp = path.join(cwd, "tmp");
      mkdirSync(temp);
      chmodSync(cwd, 0o711);
      chmodSync(temp, 0o1777);
      const file = commandPack(cwd, ["node", "-e", WRITE], {
        timeoutMs: 600000,
        wallTimeMs: 1200000,
        resources: { diskBytes: 2 * 2 ** 30 },
      });
      const r = await runCli(["run", file, "--json", "--sandbox", backend, ...commandModels(cwd)], {
        cwd,
        env: { TMPDIR: temp },
        timeoutMs: 1_500_000,
      });
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { query: string };
      const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
      try {
        const records = await store.listRecords(out.query);
        const changeset = records.find((x) => x.kind === "changeset")?.body as ChangesetBody;
        expect(changeset.complete).toBe(false);
        expect(changeset.skipped?.map((s) => s.code)).toContain("environment/too-many-changes");
        expect(changeset.files.length).toBeLessThanOrEqual(50_000);
        expect(Buffer.byteLength(JSON.stringify(changeset))).toBeLessThanOrEqual(
          CHANGESET_MAX_BYTES,
        );
      } finally {
        await store.close();
      }
      expect(readdirSync(temp)).toEqual([]);
    }, 1_600_000);
  });
}
