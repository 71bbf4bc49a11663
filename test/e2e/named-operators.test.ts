// Named operators: each act is recorded as the person who made it. A `warrant run` waits for the
// approval of three mutations; the first is approved with `--operator alice`, the second with
// WARRANT_OPERATOR=bob, the third from the console by the holder of carol's token (`warrant serve
// --operators FILE`, the file made with a token for carol). `warrant record` names each one, and
// `apply --git` commits with one `Warrant-Approved-By` trailer for each, in approval order. Names
// that are not names, and operators files that are not maps of names to tokens, are refused.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ensureStore } from "../helpers/store.js";
import { git, RESULT_SUMMARY, STEPS, writeThreeStepPack } from "../helpers/three-step-pack.js";
import { startRun } from "./cli-run.js";
import { startServe, stopServes } from "./serve-process.js";

const dirs: string[] = [];
afterAll(() => {
  stopServes();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "warrant-named-"));
  dirs.push(d);
  return d;
}

const approvalOf = (step: string) => new RegExp(`warrant approve (\\S+) ${step} \\| warrant deny`);

/** The operator acts the store holds for `query`, as `show --records --json` lists them. */
async function actsOf(query: string, store: string, cwd: string) {
  const shown = await runCli(["show", query, "--records", "--json", "--store", store], { cwd });
  return (
    JSON.parse(shown.stdout) as { acts: { kind: string; target: string; operator: string }[] }
  ).acts;
}

describe("named operators", () => {
  it("--operator, WARRANT_OPERATOR and a console token of --operators each name their act; record and apply --git say who approved", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const { pack, workspace, models } = writeThreeStepPack(cwd);
    const run = startRun([pack, ...models, "--store", store], cwd);
    const [, query] = await run.waitFor(/opened (query:\S+)/);

    // 1. --operator NAME.
    const [, proposal] = await run.waitFor(approvalOf(STEPS[0]));
    const a = await runCli(
      ["approve", proposal as string, STEPS[0], "--operator", "alice", "--store", store],
      { cwd },
    );
    expect(a.code, a.stderr).toBe(0);

    // 2. WARRANT_OPERATOR.
    await run.waitFor(approvalOf(STEPS[1]));
    const b = await runCli(["approve", proposal as string, STEPS[1], "--store", store], {
      cwd,
      env: { WARRANT_OPERATOR: "bob" },
    });
    expect(b.code, b.stderr).toBe(0);

    // 3. The console, with carol's token from an operators file that did not exist.
    await run.waitFor(approvalOf(STEPS[2]));
    const file = path.join(cwd, "operators.json");
    writeFileSync(file, JSON.stringify({ carol: null, dave: null }));
    const served = await startServe(["--store", store, "--operators", file], cwd);
    const base = served.url;
    expect(base).not.toContain("#token=");
    const written = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
    expect(Object.keys(written)).toEqual(["carol", "dave"]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const carol = written.carol as string;
    expect(carol).toMatch(/^[A-Za-z0-9._~-]{16,256}$/);
    expect(written.dave).not.toBe(carol);
    // Each token printed once, on its own line after the URL.
    await expect
      .poll(() => served.stdout())
      .toContain(`carol ${base.replace(/\/$/, "")}/#token=${carol}`);
    expect(served.stdout()).toContain(`dave ${base.replace(/\/$/, "")}/#token=${written.dave}`);
    const api = (p: string, token: string, init: RequestInit = {}) =>
      fetch(new URL(p, base), {
        ...init,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      });
    expect((await api("/api/session", carol)).status).toBe(200);
    expect(await (await api("/api/session", carol)).json()).toEqual({ operator: "carol" });
    // No shared token: anything else is refused.
    expect((await api("/api/pending", "not-a-token-of-anyone")).status).toBe(401);
    const posted = await api("/api/approvals", carol, {
      method: "POST",
      body: JSON.stringify({ run: proposal, step: STEPS[2], decision: "approve" }),
    });
    expect(posted.status).toBe(200);

    const r = await run.done;
    expect(r.stdout).toContain("loop stopped: succeeded");

    const acts = await actsOf(query as string, store, cwd);
    expect(acts.map((x) => [x.target.split(" ")[1], x.operator])).toEqual([
      [STEPS[0], "node-operator-binding:alice"],
      [STEPS[1], "node-operator-binding:bob"],
      [STEPS[2], "node-operator-binding:carol"],
    ]);
    const shown = JSON.parse(
      (await runCli(["show", query as string, "--json", "--store", store], { cwd })).stdout,
    ) as { records: { ref: string; kind: string }[] };
    const execution = shown.records.findLast((x) => x.kind === "execution")?.ref as string;
    const rec = await runCli(["record", execution, "--store", store], { cwd });
    expect(rec.code, rec.stderr).toBe(0);
    for (const [step, who] of [
      [STEPS[0], "alice"],
      [STEPS[1], "bob"],
      [STEPS[2], "carol"],
    ])
      expect(rec.stdout).toContain(
        `approve ${step} of ${proposal} by node-operator-binding:${who} at `,
      );

    // apply --git: one Warrant-Approved-By trailer per approver, in approval order.
    const applied = await runCli(["apply", query as string, "--git", "--json", "--store", store], {
      cwd,
    });
    expect(applied.code, applied.stderr).toBe(0);
    const { branch } = JSON.parse(applied.stdout) as { branch: string };
    const message = git(workspace, "log", "-1", "--format=%B", branch);
    expect(message.startsWith(RESULT_SUMMARY.split(".")[0] as string)).toBe(true);
    const trailers = git(
      workspace,
      "log",
      "-1",
      "--format=%(trailers:key=Warrant-Approved-By,valueonly)",
      branch,
    );
    expect(trailers.trim().split("\n")).toEqual(["alice", "bob", "carol"]);

    // Served again from the same file: no token is made, none printed.
    stopServes();
    const again = await startServe(["--store", store, "--operators", file], cwd);
    await expect.poll(() => again.stderr()).toContain("2 operator(s)");
    expect(again.stdout()).not.toContain(carol);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(written);
  }, 180_000);

  it("a name that is not one is refused operator/name-invalid (exit 2) before anything is recorded", async () => {
    const cwd = tempDir();
    await ensureStore(undefined, cwd);
    const unknown = `corpus-experiment:sha256:${"A".repeat(43)}`;
    for (const [args, env, why] of [
      [["--operator", ""], {}, "not empty"],
      [["--operator", "al ice"], {}, "no white space"],
      [["--operator", "x".repeat(129)], {}, "at most 128"],
      [["--operator", "ali\u001b[31mce"], {}, "no control character"],
      [[], { WARRANT_OPERATOR: "bad\tname" }, "WARRANT_OPERATOR"],
    ] as const) {
      for (const act of [
        ["approve", unknown, "fix"],
        ["cancel", "query:nothing"],
        ["answer", "query:nothing", "yes"],
        ["renew", "query:nothing", "--extend", "1000"],
      ]) {
        const r = await runCli([...act, ...args], { cwd, env });
        expect(r.code, `${act[0]} ${why}`).toBe(2);
        expect(r.stderr).toContain("operator/name-invalid");
        expect(r.stderr).toContain(why);
        // Nothing raw reaches the terminal.
        expect(r.stderr).not.toContain("\u001b");
      }
    }
    // A command that does not act is not refused for it.
    const loops = await runCli(["loops"], { cwd, env: { WARRANT_OPERATOR: "bad\tname" } });
    expect(loops.code, loops.stderr).toBe(0);
    // A valid name gets as far as the store: the run is unknown there.
    const valid = await runCli(["approve", unknown, "fix", "--json", "--operator", "al.ice@x"], {
      cwd,
    });
    expect(valid.code).toBe(1);
    expect(JSON.parse(valid.stdout)).toMatchObject({ ok: false, code: "loop/run-missing" });
  });

  it("serve refuses --operators files that are not maps of names to tokens, and --token with --operators", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    await ensureStore(store, cwd);
    const cases: [string, string, string][] = [
      ["not JSON", "{", "operator/file-invalid"],
      ["an array", "[]", "operator/file-invalid"],
      ["an empty map", "{}", "operator/file-invalid"],
      ["a short token", JSON.stringify({ alice: "short" }), "operator/file-invalid"],
      ["a number", JSON.stringify({ alice: 7 }), "operator/file-invalid"],
      [
        "a shared token",
        JSON.stringify({ alice: "a".repeat(20), bob: "a".repeat(20) }),
        "operator/file-invalid",
      ],
      ["a bad name", JSON.stringify({ "al ice": null }), "operator/name-invalid"],
    ];
    for (const [what, text, code] of cases) {
      const file = path.join(cwd, "operators.json");
      writeFileSync(file, text);
      const r = await runCli(["serve", "--store", store, "--port", "0", "--operators", file], {
        cwd,
        timeoutMs: 20_000,
      });
      expect(r.code, what).toBe(2);
      expect(r.stderr, what).toContain(code);
      expect(r.stderr, what).toContain(file);
      // A token never reaches an error message.
      expect(r.stderr, what).not.toContain("a".repeat(20));
    }
    const both = await runCli(
      [
        "serve",
        "--store",
        store,
        "--operators",
        path.join(cwd, "x.json"),
        "--token",
        "t".repeat(20),
      ],
      { cwd },
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--token and --operators exclude each other");
    // A console that does not start keeps no token it never showed: no file is made.
    const unsaved = path.join(cwd, "unsaved.json");
    const missing = await runCli(
      ["serve", "--store", `sqlite:${path.join(cwd, "none.db")}`, "--operators", unsaved],
      { cwd },
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("store/not-found");
    expect(existsSync(unsaved)).toBe(false);
  }, 120_000);

  it("serve --operators FILE that does not exist makes it for the operator of this host, mode 0600, and prints its token once (--json)", async () => {
    const cwd = tempDir();
    const store = `sqlite:${path.join(cwd, "ledger.db")}`;
    const file = path.join(cwd, "people.json");
    const served = await startServe(["--store", store, "--operators", file, "--json"], cwd, {
      WARRANT_OPERATOR: "erin",
    });
    const first = JSON.parse(served.url) as {
      url: string;
      operators: string[];
      generated: { operator: string; url: string }[];
    };
    const written = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
    expect(Object.keys(written)).toEqual(["erin"]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.operators).toEqual(["erin"]);
    expect(first.generated).toEqual([
      { operator: "erin", url: `${first.url.replace(/\/$/, "")}/#token=${written.erin}` },
    ]);
    const session = await fetch(new URL("/api/session", first.url), {
      headers: { authorization: `Bearer ${written.erin}` },
    });
    expect(await session.json()).toEqual({ operator: "erin" });
  });
});
