// Warrant as a user with a local model runs it, against a model that knows only what each request
// says (the schema-reading server: nothing replayed): the preflight probes it, every role's first
// request is enough for a message the host accepts, the implementer's first Plan becomes the first
// proposal, and `show --json` reports exactly the tokens the server said it spent.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/adapters/store/open-store.js";
import { runCli } from "../helpers/cli.js";
import { startSchemaReadingServer } from "../models/schema-reading-server.js";
import { demoPack } from "./cli-run.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("warrant run with a model that reads only the request", () => {
  it("probes it, runs the loop on its answers, and accounts for every token it reported", {
    timeout: 120_000,
  }, async () => {
    const server = await startSchemaReadingServer();
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-reader-run-"));
    dirs.push(cwd);
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const env = { OPENAI_API_KEY: "", OPENAI_BASE_URL: "" };
    try {
      const uri = `openai-compatible:${server.url}/v1#schema-reader`;
      const models = ["implementer", "reviewer", "summarizer"].flatMap((r) => [
        "--model",
        `${r}=${uri}`,
      ]);
      const check = await runCli(["run", demoPack, ...models, "--check", "--probe"], { cwd, env });
      expect(check.code, check.stdout + check.stderr).toBe(0);
      expect(check.stdout).toContain("it lists schema-reader");

      const run = await runCli(["run", demoPack, ...models, "--yes", "--json", "--store", store], {
        cwd,
        env,
        timeoutMs: 110_000,
      });
      expect(server.failures).toEqual([]);
      // Blocked on the experiments budget (below): exit 3.
      expect(run.code, run.stderr).toBe(3);
      const outcome = JSON.parse(run.stdout) as {
        query: string;
        status: string;
        spent: { runs: number };
      };
      // The slugify bug is not fixed by a plan written from the request alone: the runs fail
      // verification until the experiments budget is spent.
      expect(outcome).toMatchObject({ status: "blocked", spent: { runs: 3 } });
      // The live view said each passage's tokens.
      expect(run.stderr).toMatch(
        / {2}implementer → Plan \(1 model call; tokens \d+ in, \d+ out \(7 reasoning\)\)/,
      );

      // The first request of the first implementer passage was answered with a Plan, and that Plan
      // is the first proposal: no repair, no refusal.
      expect(server.calls[0]?.type).toBe("Plan");
      const ledger = await openStore(store);
      try {
        const records = await ledger.listRecords(outcome.query);
        const proposals = records.filter((r) => r.kind === "proposal");
        expect((proposals[0]?.body as { candidate: unknown } | undefined)?.candidate).toEqual(
          server.calls[0]?.payload,
        );
        const ends = records
          .filter((r) => r.kind === "passageEnd")
          .map(
            (r) =>
              r.body as { "model/calls": number; "plan/problems"?: unknown[]; failure?: unknown },
          );
        expect(ends.every((e) => e["model/calls"] === 1 && e.failure === undefined)).toBe(true);
        expect(ends.every((e) => (e["plan/problems"] ?? []).length === 0)).toBe(true);
      } finally {
        await ledger.close();
      }

      const shown = await runCli(["show", outcome.query, "--json", "--store", store], { cwd });
      const { usage } = JSON.parse(shown.stdout) as {
        usage: Record<string, number> & { byRole: Record<string, Record<string, number>> };
      };
      const sum = (f: (u: (typeof server.calls)[number]["usage"]) => number, type?: string) =>
        server.calls
          .filter((c) => type === undefined || c.type === type)
          .reduce((n, c) => n + f(c.usage), 0);
      expect(usage).toMatchObject({
        modelCalls: server.calls.length,
        inputTokens: sum((u) => u.prompt_tokens),
        outputTokens: sum((u) => u.completion_tokens),
        cachedInputTokens: sum((u) => u.cached_tokens),
        reasoningTokens: sum((u) => u.reasoning_tokens),
      });
      expect(usage.inputTokens).toBeGreaterThan(0);
      expect(usage.byRole.implementer).toEqual({
        modelCalls: server.calls.filter((c) => c.type === "Plan").length,
        inputTokens: sum((u) => u.prompt_tokens, "Plan"),
        outputTokens: sum((u) => u.completion_tokens, "Plan"),
        cachedInputTokens: sum((u) => u.cached_tokens, "Plan"),
        reasoningTokens: sum((u) => u.reasoning_tokens, "Plan"),
      });
      expect(usage.byRole.reviewer?.modelCalls).toBe(
        server.calls.filter((c) => c.type === "Verdict").length,
      );
      const human = await runCli(["show", outcome.query, "--store", store], { cwd });
      expect(human.stdout).toContain(
        `usage: ${usage.modelCalls} model calls; tokens ${usage.inputTokens} in (${usage.cachedInputTokens} cached), ${usage.outputTokens} out (${usage.reasoningTokens} reasoning)`,
      );
    } finally {
      await server.close();
    }
  });
});
