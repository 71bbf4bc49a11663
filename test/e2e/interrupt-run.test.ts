// What a `warrant run` leaves when it is stopped from outside, on each backend: SIGTERM (or
// SIGINT) mid-run destroys its environment and pinned baseline before it exits 143 (130); a run
// killed outright (SIGKILL) leaves them, and `warrant cancel` on its loop removes its environment.
// And host-side work stays bounded: 100 000 one-byte files end in a run that concludes with an
// incomplete changeset (`environment/too-many-changes`) instead of an hour of hashing.
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { ChangesetBody } from "../../src/runtime/changeset.js";
import type { RunReportBody } from "../../src/runtime/records.js";
import { cliPath, runCli } from "../helpers/cli.js";
import { commandModels, commandPack } from "./command-pack.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const pack = (dir: string, argv: readonly string[], resources: Record<string, number> = {}) =>
  commandPack(dir, argv, {
    name: "interrupted",
    timeoutMs: 600000,
    wallTimeMs: 1200000,
    resources: { diskBytes: 2 * 2 ** 30, ...resources },
  });
const models = commandModels;

/** A working folder and a temp directory the commands' uid can reach, empty. */
function place(): { cwd: string; temp: string } {
  const cwd = mkdtempSync(path.join(tmpdir(), "warrant-interrupt-"));
  dirs.push(cwd);
  const temp = path.join(cwd, "tmp");
  mkdirSync(temp);
  chmodSync(cwd, 0o711);
  chmodSync(temp, 0o1777);
  return { cwd, temp };
}

const leftovers = (temp: string) => readdirSync(temp).filter((n) => n.startsWith("warrant-"));

/** Start `warrant run` without waiting; resolves once its run's environment (not a probe's) exists. */
async function startRun(
  cwd: string,
  temp: string,
  args: readonly string[],
): Promise<{
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null }>;
}> {
  const child = spawn(process.execPath, [cliPath, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", TMPDIR: temp },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((done) =>
    child.on("close", (code, signal) => done({ code, signal })),
  );
  for (let i = 0; i < 1200; i++) {
    if (leftovers(temp).some((n) => n.startsWith("warrant-env-run-"))) return { child, exited };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error("the run made no environment of its own");
}

async function onlyLoop(cwd: string): Promise<string> {
  const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
  try {
    const loops = await store.listLoops();
    expect(loops).toHaveLength(1);
    return (loops[0] as { query: string }).query;
  } finally {
    await store.close();
  }
}

const backends = [] as ("bwrap" | "unshare")[];
const skipped: string[] = [];
for (const b of ["bwrap", "unshare"] as const) {
  const found = await detectSandbox({ only: b });
  if (found.ok) backends.push(b);
  else skipped.push(`${b}: ${found.errors[0]?.message}`);
}

describe.skipIf(backends.length === 0)(
  `a run stopped from outside${skipped.length === 0 ? "" : ` (not here: ${skipped.join("; ")})`}`,
  () => {
    for (const backend of backends) {
      it(`${backend}: SIGTERM mid-run destroys the environment and the pin before the process exits`, async () => {
        const { cwd, temp } = place();
        const file = pack(cwd, ["sleep", "120"]);
        for (const [signal, code] of [
          ["SIGTERM", 143],
          ["SIGINT", 130],
        ] as const) {
          const run = await startRun(cwd, temp, [
            "run",
            file,
            "--json",
            "--sandbox",
            backend,
            ...models(cwd),
          ]);
          run.child.kill(signal);
          expect((await run.exited).code, signal).toBe(code);
          expect(leftovers(temp), signal).toEqual([]);
        }
      }, 240_000);

      it(`${backend}: a run killed outright leaves its environment; cancel removes it`, async () => {
        const { cwd, temp } = place();
        const run = await startRun(cwd, temp, [
          "run",
          pack(cwd, ["sleep", "120"]),
          "--json",
          "--sandbox",
          backend,
          ...models(cwd),
        ]);
        run.child.kill("SIGKILL");
        await run.exited;
        expect(leftovers(temp).some((n) => n.startsWith("warrant-env-"))).toBe(true);
        const query = await onlyLoop(cwd);
        const r = await runCli(["cancel", query, "--json"], { cwd, env: { TMPDIR: temp } });
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect(leftovers(temp).filter((n) => n.startsWith("warrant-env-"))).toEqual([]);
      }, 240_000);

      it(`${backend}: 100 000 one-byte files: the run concludes, its changeset incomplete (environment/too-many-changes)`, async () => {
        const { cwd, temp } = place();
        const write =
          'const fs = require("fs"); fs.mkdirSync("src/many"); for (let i = 0; i < 100000; i++) fs.writeFileSync("src/many/f" + i, "x");';
        const r = await runCli(
          [
            "run",
            pack(cwd, ["node", "-e", write], { changedEntries: 1000 }),
            "--json",
            "--sandbox",
            backend,
            ...models(cwd),
          ],
          { cwd, env: { TMPDIR: temp }, timeoutMs: 900_000 },
        );
        expect(r.code, r.stderr).toBe(0);
        const out = JSON.parse(r.stdout) as { query: string; status: string };
        expect(out.status).toBe("stopped");
        const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
        try {
          const records = await store.listRecords(out.query);
          const report = records.find((x) => x.kind === "runReport")?.body as RunReportBody;
          expect(report.outcome).toBe("verified");
          expect(report["environment/destroyed"]).toBe(true);
          const changeset = records.find((x) => x.kind === "changeset")?.body as ChangesetBody;
          expect(changeset.complete).toBe(false);
          expect(changeset.skipped?.map((s) => s.code)).toContain("environment/too-many-changes");
          expect(changeset.files.length).toBeLessThanOrEqual(1000);
          expect(Buffer.byteLength(JSON.stringify(changeset))).toBeLessThan(1 << 20);
        } finally {
          await store.close();
        }
        expect(leftovers(temp)).toEqual([]);
      }, 960_000);
    }
  },
);
