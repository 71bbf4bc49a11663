// `warrant pending` and the `waiting` of `warrant loops`, read from the store while a `warrant run`
// without --yes waits in another process for a mutation's approval.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ensureStore } from "../helpers/store.js";
import { demoPack, scripted, startRun } from "./cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => ["--model", scripted(r)]);
const APPROVAL = /warrant approve (\S+) (\S+) \| warrant deny/;

describe("pending approvals across the store", () => {
  it("pending --json lists the approval a run waits for; loops shows it waiting; none once approved", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-pending-"));
    dirs.push(cwd);
    await ensureStore(undefined, cwd);
    const empty = await runCli(["pending", "--json"], { cwd });
    expect(empty.code, empty.stderr).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual([]);
    expect((await runCli(["pending"], { cwd })).stdout).toContain("no approval is waited for");

    const run = startRun([demoPack, ...models], cwd);
    const [, query] = await run.waitFor(/opened (query:\S+)/);
    const [, proposal, step] = await run.waitFor(APPROVAL);
    const listed = await runCli(["pending", "--json"], { cwd });
    expect(listed.code, listed.stderr).toBe(0);
    const pending = JSON.parse(listed.stdout) as Record<string, unknown>[];
    expect(pending).toEqual([
      {
        query,
        run: proposal,
        step,
        kind: "mutation",
        proposal,
        hypothesis: expect.any(String),
        path: "src/slugify.js",
        summary: expect.stringMatching(/^(patch|write) src\/slugify\.js/),
        waitingSince: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
    const text = await runCli(["pending"], { cwd });
    expect(text.stdout).toContain(`warrant approve ${proposal} ${step}`);
    const loops = JSON.parse((await runCli(["loops", "--json"], { cwd })).stdout) as unknown[];
    expect(loops).toEqual([
      {
        query,
        state: "open",
        // The waiting run holds the loop's lease while it asks.
        status: "driving",
        heldBy: expect.any(String),
        leaseUntil: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        waiting: { reason: "approval", run: proposal, step, kind: "mutation" },
      },
    ]);
    expect((await runCli(["loops"], { cwd })).stdout).toContain(`approval of ${step}`);

    expect((await runCli(["approve", proposal as string, step as string], { cwd })).code).toBe(0);
    const r = await run.done;
    expect(r.stdout).toContain("loop stopped: succeeded");
    expect(JSON.parse((await runCli(["pending", "--json"], { cwd })).stdout)).toEqual([]);
    const after = JSON.parse((await runCli(["loops", "--json"], { cwd })).stdout) as unknown[];
    expect(after).toEqual([
      { query, state: "stopped", stop: { reason: "succeeded" }, status: "stopped" },
    ]);
  });
});
