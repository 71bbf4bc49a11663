// createWarrant's `sandbox` option by name: `bwrap` and `unshare` drive runs in that backend,
// `auto` in the first that works, and a named backend that does not work here rejects
// createWarrant with `sandbox/unavailable` (its program taken off PATH) instead of another.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { createUnshareSandbox } from "../../src/adapters/sandbox/unshare-sandbox.js";
import type { Sandbox } from "../../src/core/ports/sandbox.js";
import { createWarrant, type WarrantEvent } from "../../src/index.js";
import type { RunReportBody } from "../../src/runtime/records.js";
import { memoryStore } from "../../src/testing.js";
import { accept, fixtures, plan, result, turn } from "../runtime/harness.js";

const PACK = path.join(fixtures, "task-pack.json");
const bare = mkdtempSync(path.join(tmpdir(), "warrant-bare-path-"));
afterAll(() => rmSync(bare, { recursive: true, force: true }));

const here: string[] = [];
for (const b of ["bwrap", "unshare"] as const)
  if ((await detectSandbox({ only: b })).ok) here.push(b);

function models() {
  const one = (t: unknown) => async () => t as never;
  return {
    implementer: one(turn("Plan", plan("good-fix"))),
    reviewer: one(accept),
    summarizer: one(result),
  };
}

describe("the library's sandbox option", () => {
  for (const backend of ["bwrap", "unshare"] as const) {
    it.skipIf(!here.includes(backend))(
      `${backend}: runs start in that backend${here.includes(backend) ? "" : " (skipped: not here)"}`,
      async () => {
        const seen: WarrantEvent[] = [];
        const warrant = await createWarrant({
          store: memoryStore(),
          models: models(),
          sandbox: backend,
          approver: "auto",
          signer: "none",
          onEvent: (e) => seen.push(e),
        });
        try {
          await warrant.run(PACK).result;
        } finally {
          await warrant.close();
        }
        const starts = seen.filter((e) => e.kind === "run-start");
        expect(starts.length).toBeGreaterThan(0);
        expect(starts.every((e) => "backend" in e && e.backend === backend)).toBe(true);
      },
      120_000,
    );
  }

  it.skipIf(!here.includes("unshare"))(
    "a run in the weaker sandbox (unshare without its filter, allowed) says so in its report; a filtered one does not",
    async () => {
      const reportOf = async (sandbox: Sandbox) => {
        const warrant = await createWarrant({
          store: memoryStore(),
          models: models(),
          sandbox,
          approver: "auto",
          signer: "none",
        });
        try {
          const outcome = await warrant.run(PACK).result;
          const records = await warrant.store.listRecords(outcome.query);
          return records.find((r) => r.kind === "runReport")?.body as RunReportBody;
        } finally {
          await warrant.close();
        }
      };
      const weaker = await reportOf(
        createUnshareSandbox({ seccompLoader: null, allowWeakerSandbox: true }),
      );
      expect(weaker["sandbox/seccomp"]).toBe(false);
      const filtered = await reportOf(createUnshareSandbox());
      expect(filtered["environment/destroyed"]).toBe(true);
      expect("sandbox/seccomp" in filtered).toBe(false);
    },
    180_000,
  );

  it("a named backend whose program is not on PATH rejects createWarrant with sandbox/unavailable", async () => {
    const saved = process.env.PATH;
    process.env.PATH = bare;
    try {
      for (const backend of ["bwrap", "unshare"] as const) {
        await expect(
          createWarrant({ store: memoryStore(), sandbox: backend, signer: "none" }),
        ).rejects.toMatchObject({
          code: "sandbox/unavailable",
          message: expect.stringContaining(`the ${backend} sandbox backend is unavailable here`),
        });
      }
      // auto is no error: with nothing here every run is refused environment/not-contained.
      const w = await createWarrant({ store: memoryStore(), sandbox: "auto", signer: "none" });
      await w.close();
    } finally {
      process.env.PATH = saved;
    }
  });
});
