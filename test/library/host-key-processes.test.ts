// The host key made by several processes at once (workers starting together on one machine): each
// reads the same 32-byte key, none sees it half-written, and no temporary file is left. The built
// module (dist/) runs in each process.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(path.join(tmpdir(), "warrant-key-procs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the host key across processes", () => {
  it("is never read half-written when many processes create it at once", async () => {
    // Separate processes, as several workers starting together on one machine.
    const d = path.join(dir, "many");
    const module = path.resolve("dist/src/adapters/fs/host-key.js"); // built by npm test;
    const script =
      `const { loadOrCreateHostKey } = await import(${JSON.stringify(module)});` +
      `process.stdout.write(Buffer.from(await loadOrCreateHostKey(${JSON.stringify(d)})).toString("hex"));`;
    const keys = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<string>((resolve, reject) =>
            execFile(
              process.execPath,
              ["--input-type=module", "-e", script],
              (e, stdout, stderr) => (e === null ? resolve(stdout) : reject(new Error(stderr))),
            ),
          ),
      ),
    );
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(keys).size).toBe(1);
    // No temporary file is left beside it.
    expect(readdirSync(d)).toEqual(["host.key"]);
  });
});
