// The host's change walk is bounded on every backend and in each mode: past `maxEntries` changed
// entries, or past `timeMs`, it stops where it is — `complete: false` with an
// `environment/too-many-changes` finding — instead of walking (and hashing) all a command wrote.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import type { EnvironmentChanges, Sandbox } from "../../src/core/ports/sandbox.js";

const required = new Set((process.env.WARRANT_REQUIRE_BACKENDS ?? "").split(",").filter(Boolean));
const work = mkdtempSync(path.join(tmpdir(), "warrant-change-bounds-"));
const baseline = path.join(work, "baseline");
mkdirSync(path.join(baseline, "src"), { recursive: true });
for (let i = 0; i < 50; i++) writeFileSync(path.join(baseline, "src", `old${i}`), `${i}`);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const listed = (c: EnvironmentChanges) => c.added.length + c.modified.length + c.deleted.length;
const tooMany = (c: EnvironmentChanges) =>
  c.findings.filter((f) => f.code === "environment/too-many-changes");

for (const backend of ["bwrap", "unshare"] as const) {
  for (const layers of ["overlay", "copy"] as const) {
    const found = await detectSandbox({ only: backend, layers });
    const reason = found.ok ? "" : (found.errors[0]?.message ?? "probe failed");
    const sandbox = found.ok ? found.value : undefined;
    if (!found.ok && required.has(backend) && layers === "overlay")
      it(`${backend} is required here and works`, () => expect(reason).toBe(""));
    describe.skipIf(!found.ok)(
      `the change walk's bounds: ${backend}, ${layers}${found.ok ? "" : ` (skipped: ${reason})`}`,
      () => {
        it("stops past maxEntries and past timeMs, incomplete with environment/too-many-changes", async () => {
          const env = await (sandbox as Sandbox).createEnvironment(baseline);
          try {
            // 600 new files, 20 changed, 10 deleted.
            const r = await env.exec(
              [
                "sh",
                "-c",
                "mkdir m && i=0; while [ $i -lt 600 ]; do echo $i > m/f$i; i=$((i+1)); done; " +
                  "for i in $(seq 0 19); do echo x >> src/old$i; done; rm src/old4?",
              ],
              { timeoutMs: 60_000, maxOutputBytes: 4096 },
            );
            expect(r.exitCode, r.stderr).toBe(0);
            const all = await env.changes();
            expect([all.complete, tooMany(all)]).toEqual([true, []]);
            expect([all.added.length, all.modified.length, all.deleted.length]).toEqual([
              600, 20, 10,
            ]);
            // A modified file carries the baseline's digest beside its own.
            expect(all.modified[0]?.before).toMatch(/^sha256:/);
            expect(all.modified[0]?.before).not.toBe(all.modified[0]?.digest);

            const few = await env.changes({ maxEntries: 100 });
            expect(few.complete).toBe(false);
            expect(tooMany(few)).toHaveLength(1);
            expect(tooMany(few)[0]?.message).toContain("more than 100 changed entries");
            expect(listed(few)).toBeLessThanOrEqual(100);
            // Exactly at the bound is within it.
            const exact = await env.changes({ maxEntries: listed(all) });
            expect([exact.complete, listed(exact)]).toEqual([true, listed(all)]);

            const late = await env.changes({ timeMs: 0 });
            expect(late.complete).toBe(false);
            expect(tooMany(late)[0]?.message).toContain("time bound of 0 ms");
            expect(listed(late)).toBeLessThan(listed(all));
            // One large file: its hashing stops at the bound, chunk by chunk.
            await env.exec(["sh", "-c", "rm -r m && head -c 33554432 /dev/zero > big"], {
              timeoutMs: 60_000,
              maxOutputBytes: 4096,
            });
            const big = await env.changes({ timeMs: 0 });
            expect(big.complete).toBe(false);
            expect(big.added.map((a) => a.path)).not.toContain("big");
            const whole = await env.changes();
            expect(whole.added.map((a) => a.path)).toContain("big");
          } finally {
            await env.destroy();
          }
        }, 120_000);
      },
    );
  }
}
