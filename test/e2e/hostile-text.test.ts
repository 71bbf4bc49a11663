// Text a terminal would act on, through a real loop: a model's plan, answers and Result, a command's
// output and a file name all hold escape sequences (retitle the window, erase a line, a carriage
// return, an 8-bit CSI). What the CLI prints of them (the live view off a terminal, `pending`,
// `loops`, `record`, `show --records`) holds no raw control character, and the escaped text is
// there to read; `--json` stays JSON, with the exact text.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { runCli } from "../helpers/cli.js";
import { startRun } from "./cli-run.js";
import {
  expectNoRawControls,
  HOSTILE,
  HOSTILE_STEP,
  hostileModels,
  hostilePack,
  SHOWN,
} from "./hostile-text-pack.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const APPROVAL = /warrant approve (\S+) (\S+) \| warrant deny/g;

interface Pending {
  readonly run: string;
  readonly step: string;
  readonly summary: string;
}

const detected = await detectSandbox();
const why = detected.ok ? "" : ` (skipped: no containment backend: ${detected.errors[0]?.message})`;

describe.skipIf(!detected.ok)(`hostile text in what the CLI prints${why}`, () => {
  it("pending, loops, the live view, record and show --records escape it; --json keeps it exact", async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-hostile-text-"));
    dirs.push(cwd);
    const running = startRun([hostilePack(cwd), ...hostileModels(cwd)], cwd);
    const [, query] = await running.waitFor(/opened (query:\S+)/);

    // Two mutations wait in turn: the file's new content, then the step with the hostile name.
    const approveNext = async (step: string) => {
      let listed: Pending[] = [];
      for (let i = 0; i < 600 && !listed.some((p) => p.step === step); i++) {
        listed = JSON.parse((await runCli(["pending", "--json"], { cwd })).stdout) as Pending[];
        if (!listed.some((p) => p.step === step)) await new Promise((r) => setTimeout(r, 100));
      }
      const p = listed.find((x) => x.step === step);
      expect(p, JSON.stringify(listed)).toBeDefined();
      const text = await runCli(["pending"], { cwd });
      expect(text.code, text.stderr).toBe(0);
      expectNoRawControls(text.stdout, "pending");
      const loops = await runCli(["loops"], { cwd });
      expectNoRawControls(loops.stdout, "loops");
      const ok = await runCli(["approve", p?.run ?? "", p?.step ?? ""], { cwd });
      expect(ok.code, ok.stderr).toBe(0);
      return text.stdout;
    };
    await approveNext("fix");
    const second = await approveNext(HOSTILE_STEP);
    // The step's name is shown escaped, on its own line with the commands to answer it.
    expect(second).toContain(`mutation rename${SHOWN}: command odd-name`);
    expect(second).toContain(`warrant deny `);

    const done = await running.done;
    expect(done.stdout).toContain("loop stopped: succeeded");
    // The live view (not a terminal here): the approval's description, a file's new content.
    expectNoRawControls(done.stdout, "the live view");
    expect(done.stdout).toContain(`new ${SHOWN}`);
    expect(done.stdout).toContain(`approval of rename${SHOWN}`);
    expect([...done.stdout.matchAll(APPROVAL)]).toHaveLength(2);

    // show --records: the plan (model), the excerpt and the check's output (command), the file
    // name (the changeset), the finding and the Result (models).
    const shown = await runCli(["show", query as string, "--records"], { cwd });
    expect(shown.code, shown.stderr).toBe(0);
    expectNoRawControls(shown.stdout, "show --records");
    for (const seen of [
      `hypothesis: the file is old ${SHOWN}\\noutcome: forged`,
      `out ${SHOWN}`,
      `check ${SHOWN}`,
      `odd-${SHOWN}.txt`,
      `fine ${SHOWN}`,
      `done ${SHOWN}`,
    ])
      expect(shown.stdout, seen).toContain(seen);
    // A line feed in the hypothesis does not start a line of its own.
    expect(shown.stdout).not.toMatch(/^\s*outcome: forged/m);

    // record REF, one by one: each rendering is terminal-safe; each --json holds the exact text.
    const { records } = JSON.parse(
      (await runCli(["show", query as string, "--json"], { cwd })).stdout,
    ) as { records: { ref: string; kind: string }[] };
    const printed: string[] = [];
    for (const r of records) {
      const one = await runCli(["record", r.ref], { cwd });
      expect(one.code, one.stderr).toBe(0);
      expectNoRawControls(one.stdout, `record ${r.kind}`);
      printed.push(one.stdout);
    }
    const all = printed.join("\n");
    for (const seen of [`out ${SHOWN}`, `odd-${SHOWN}.txt`, `done ${SHOWN}`, `new ${SHOWN}`])
      expect(all, seen).toContain(seen);
    const json = await runCli(["show", query as string, "--records", "--json"], { cwd });
    expect(json.code).toBe(0);
    expect(json.stdout).toContain(JSON.stringify(`out ${HOSTILE}\n`).slice(1, -1));
  }, 240_000);
});
