// Approval at a real terminal: the built CLI runs under a pseudo-terminal made by util-linux
// `script`, asks `approve STEP of RUN? [y/N]` before each mutation with the live view's status line
// held off the prompt, and records the answer as an operator act.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { LoopDocument, Step } from "../../src/core/loop/types.js";
import type { OperatorAct } from "../../src/core/ports/ledger-store.js";
import { cliPath, runCli } from "../helpers/cli.js";
import { demoPack, scripted } from "./cli-run.js";
import { expectNoRawControls, hostileModels, hostilePack, SHOWN } from "./hostile-text-pack.js";

// `script` is util-linux's, shipped in Debian's bsdutils, which is `Essential: yes`: it is on every
// Debian machine, CI included, so this suite skips only on a system without it (node has no pty).
const hasScript = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

/** The question; a step's name is any text on the line (escaped, when it held controls). */
const PROMPT = /approve ([^\n]+?) of (corpus-experiment:sha256:\S+)\? \[y\/N\] /g;
/** The live view redraws its status line every second; an answer held longer proves the hold. */
const HOLD_MS = 1_300;
const RUN_TIMEOUT_MS = 60_000;
/** ANSI "erase the line": the live view writes it before drawing (or clearing) its status line. */
const ERASE_LINE = "\x1b[2K";

interface TerminalRun {
  readonly code: number | null;
  /** Everything written on the terminal, control sequences included. */
  readonly screen: string;
  readonly prompts: number;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `warrant ARGS` on a fresh pseudo-terminal, answering the Nth approval prompt with
 * `answers[N]` (then Enter) once the prompt's text is on the screen; `stdoutTo` sends the CLI's
 * stdout to a file instead of the terminal.
 */
async function onTerminal(
  args: readonly string[],
  cwd: string,
  answers: readonly string[],
  stdoutTo?: string,
): Promise<TerminalRun> {
  const redirect = stdoutTo === undefined ? "" : ` >${q(stdoutTo)}`;
  const command = `exec ${[process.execPath, cliPath, ...args].map(q).join(" ")}${redirect}`;
  let child: ChildProcess | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const proc = spawn("script", ["-qefc", command, "/dev/null"], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", TERM: "xterm" },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    child = proc;
    let screen = "";
    let prompts = 0;
    proc.stdout?.setEncoding("utf8").on("data", (d: string) => {
      screen += d;
      const seen = [...screen.matchAll(PROMPT)].length;
      while (prompts < seen) {
        const answer = answers[prompts] ?? "";
        prompts += 1;
        setTimeout(() => proc.stdin?.write(`${answer}\r`), HOLD_MS);
      }
    });
    proc.stderr?.setEncoding("utf8").on("data", (d: string) => {
      screen += d;
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no end within ${RUN_TIMEOUT_MS} ms:\n${screen}`)),
        RUN_TIMEOUT_MS,
      );
      proc.on("error", reject);
      proc.on("close", (c) => resolve(c));
    });
    return { code, screen, prompts };
  } finally {
    clearTimeout(timer);
    // The pty's session dies with `script`: killing its group hangs up the CLI under it.
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    child?.stdin?.destroy();
  }
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-interactive-"));
  dirs.push(d);
  return d;
}

const queryOf = (screen: string) => /^query: (query:\S+)\r?$/m.exec(screen)?.[1] ?? "";

async function acts(store: string, query: string): Promise<readonly OperatorAct[]> {
  const s = await openStore(store);
  try {
    return await s.readOperatorActs(query);
  } finally {
    await s.close();
  }
}

/** The terminal's bytes from the prompt's first character to the end of the answer's line. */
function promptRow(screen: string): string {
  const at = screen.search(/approve \S+ of corpus-experiment:/);
  expect(at).toBeGreaterThan(-1);
  const end = screen.indexOf("\n", at);
  return screen.slice(at, end < 0 ? undefined : end);
}

type Concluded = Extract<Step, { kind: "concluded" }>;
const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => ["--model", scripted(r)]);

describe.skipIf(!hasScript)(
  "approval at a terminal (a real pseudo-terminal)",
  { timeout: RUN_TIMEOUT_MS + 30_000 },
  () => {
    it("`demo --interactive --operator NAME` answered y: the diff, the prompt, the status line, success, and the act recorded as NAME's", async () => {
      const cwd = tempDir();
      const store = `sqlite:${path.join(cwd, "ledger.db")}`;
      const r = await onTerminal(
        ["demo", "--interactive", "--operator", "frank", "--store", store],
        cwd,
        ["y"],
      );
      expect(r.code, r.screen).toBe(0);
      expect(r.prompts).toBe(1);
      expect(r.screen).not.toContain("approves each mutation itself");
      // The diff of the mutation is shown before the question.
      const prompt = r.screen.search(PROMPT);
      const diff = r.screen.indexOf("--- a/src/slugify.js");
      expect(diff).toBeGreaterThan(-1);
      expect(r.screen.indexOf("+++ b/src/slugify.js")).toBeGreaterThan(diff);
      expect(diff).toBeLessThan(prompt);
      // The status line, bars and countdown, is drawn in place on the terminal (a pty that reports
      // no width counts as 80 columns, wide enough for the countdown and the first bars).
      expect(r.screen).toContain(`\r${ERASE_LINE}deadline in `);
      expect(r.screen).toMatch(
        /deadline in \d+m\d{2}s {2}passages [█░]{10} \d+\/12 {2}solver [█░]{10}/,
      );
      // Nothing is drawn over the prompt while it waits (longer than one redraw period): its row
      // holds the question, then the echoed answer, and no erase or status text.
      const row = promptRow(r.screen);
      expect(row).toMatch(/^approve fix-slugify of corpus-experiment:sha256:\S+\? \[y\/N\] /);
      expect(row).toMatch(/y\r*$/);
      expect(row).not.toContain(ERASE_LINE);
      expect(row).not.toContain("deadline");
      // Once answered, the status line no longer says the loop waits for that approval.
      const after = r.screen.slice(r.screen.indexOf(row) + row.length);
      expect(after).toContain(`${ERASE_LINE}deadline in `);
      expect(after).not.toContain("waiting: approval");
      expect(r.screen).toContain("loop stopped: succeeded");

      const query = queryOf(r.screen);
      const doc = JSON.parse((await runCli(["export", query, "--store", store], { cwd })).stdout);
      expect((doc as LoopDocument).stop?.reason).toBe("succeeded");
      const answered = (await acts(store, query)).filter((a) => a.kind === "approve");
      expect(answered).toHaveLength(1);
      expect(answered[0]).toMatchObject({
        text: "answered at the terminal",
        operator: "node-operator-binding:frank",
      });
      expect(answered[0]?.target).toContain("fix-slugify");
    });

    it("`demo --interactive` answered n: the run concludes refused hil/denied and the loop goes on", async () => {
      const cwd = tempDir();
      const store = `sqlite:${path.join(cwd, "ledger.db")}`;
      const r = await onTerminal(["demo", "--interactive", "--store", store], cwd, ["n"]);
      expect(r.prompts).toBe(1);
      expect(promptRow(r.screen)).toMatch(/\[y\/N\] .*n\r*$/);
      // The scripted implementer has no answer left after the denial: the loop waits on its model.
      expect(r.screen).toMatch(/loop blocked: model/);
      // Blocked, waiting on its model: exit 3.
      expect(r.code, r.screen).toBe(3);

      const query = queryOf(r.screen);
      const exported = await runCli(["export", query, "--store", store], { cwd });
      expect(exported.code).toBe(0);
      const doc = JSON.parse(exported.stdout) as LoopDocument;
      expect(doc.state).toBe("open");
      expect(doc.stop).toBeUndefined();
      const steps = doc.facts.map((f) => f.step);
      const denied = steps.findIndex((s) => s.kind === "concluded" && s.outcome === "refused");
      expect(steps[denied]).toMatchObject({ outcome: "refused", "refusal/code": "hil/denied" });
      // The loop went on: a new implementer passage was charged after the denied run's conclusion.
      expect(steps.slice(denied + 1)).toContainEqual(
        expect.objectContaining({ kind: "passage-charged", role: "implementer" }),
      );
      const denials = (await acts(store, query)).filter((a) => a.kind === "deny");
      expect(denials).toEqual([
        expect.objectContaining({ kind: "deny", text: "answered at the terminal" }),
      ]);
    });

    it("`run` without --yes on a terminal asks too; a bare Enter denies (hil/denied in show --json)", async () => {
      const cwd = tempDir();
      const store = `sqlite:${path.join(cwd, "ledger.db")}`;
      const r = await onTerminal(["run", demoPack, ...models, "--store", store], cwd, [""]);
      expect(r.prompts).toBe(1);
      // After the denial the scripted implementer has no answer left: blocked on its model, exit 3.
      expect(r.code, r.screen).toBe(3);
      const query = queryOf(r.screen);
      const shown = await runCli(["show", query, "--json", "--store", store], { cwd });
      expect(shown.code).toBe(0);
      const { loop } = JSON.parse(shown.stdout) as { loop: LoopDocument };
      const concluded = loop.facts
        .map((f) => f.step)
        .filter((s): s is Concluded => s.kind === "concluded");
      expect(concluded.map((c) => [c.outcome, c["refusal/code"]])).toEqual([
        ["verification-failed", undefined],
        ["refused", "hil/denied"],
      ]);
      expect(loop.state).toBe("open");
      expect((await acts(store, query)).map((a) => a.kind)).toEqual(["deny"]);
    });

    it("hostile text in the approval's description and the step's name reaches the terminal escaped", async () => {
      const cwd = tempDir();
      const store = `sqlite:${path.join(cwd, "ledger.db")}`;
      const args = ["run", hostilePack(cwd), ...hostileModels(cwd), "--store", store];
      const r = await onTerminal(args, cwd, ["y", "y"]);
      expect(r.code, r.screen).toBe(0);
      expect(r.prompts).toBe(2);
      // The file's new content (a model's) is shown escaped before the first question; the step's
      // hostile name is escaped in the wait line and in the question itself.
      const first = r.screen.search(PROMPT);
      expect(r.screen.indexOf(`new ${SHOWN}`)).toBeGreaterThan(-1);
      expect(r.screen.indexOf(`new ${SHOWN}`)).toBeLessThan(first);
      expect(r.screen).toContain(`waiting: approval of rename${SHOWN}: warrant approve `);
      expect(r.screen).toContain(`approve rename${SHOWN} of corpus-experiment:sha256:`);
      // None of the content's sequences reaches the terminal raw. The terminal's own remain: the
      // pty's CR before each LF, the view's erase of its status line, readline's cursor moves.
      for (const raw of ["\x1b]0;pwned", "\x07", "B\x1b[2KC", "C\rD", "\x9b"])
        expect(r.screen.includes(raw), JSON.stringify(raw)).toBe(false);
      const ownSequences = r.screen
        .replace(/\r+\n/g, "\n")
        .replaceAll("\r\x1b[2K", "")
        // biome-ignore lint/suspicious/noControlCharactersInRegex: readline's own cursor moves.
        .replace(/\x1b\[(?:2K|0J|\d+G)/g, "");
      expectNoRawControls(ownSequences, "the terminal");
    });

    it("`demo --interactive --json`: the prompt and the live view stay on the terminal, stdout carries only the result", async () => {
      const cwd = tempDir();
      const store = `sqlite:${path.join(cwd, "ledger.db")}`;
      const result = path.join(cwd, "result.json");
      const args = ["demo", "--interactive", "--json", "--store", store];
      const r = await onTerminal(args, cwd, ["y"], result);
      expect(r.code, r.screen).toBe(0);
      expect(r.prompts).toBe(1);
      expect(r.screen).toContain(`\r${ERASE_LINE}deadline in `);
      const body = JSON.parse(readFileSync(result, "utf8")) as Record<string, unknown>;
      expect(body).toMatchObject({ store, status: "stopped", stop: { reason: "succeeded" } });
    });
  },
);
