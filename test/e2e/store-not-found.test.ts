// A mistyped store path is said, never made: every command that only reads or acts on a ledger
// exits 1 with `store/not-found` on a `sqlite:` path that does not exist and leaves no file or
// folder behind; `demo` (as `run`) creates its store, and folders only inside the current folder.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";

const root = mkdtempSync(path.join(tmpdir(), "warrant-missing-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const QUERY = "query:missing-store";
const RUN = `corpus-experiment:sha256:${"A".repeat(43)}`;
const STORE = "sqlite:typo/ledger.db";

/** Each read-only command, with the arguments it needs to get as far as opening the store. */
const COMMANDS: readonly (readonly string[])[] = [
  ["loops"],
  ["show", QUERY],
  ["record", RUN],
  ["pending"],
  ["diff", QUERY],
  ["apply", QUERY],
  ["export", QUERY],
  ["loop", "check", QUERY],
  ["serve", "--port", "0"],
  ["approve", RUN, "step-1"],
  ["deny", RUN, "step-1"],
  ["answer", QUERY, "yes"],
  ["renew", QUERY, "--extend", "60000"],
  ["cancel", QUERY],
  ["workers"],
  ["requeue", QUERY],
  ["resume", QUERY],
];

function tree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe("read-only commands on a missing sqlite: store", () => {
  it.each(COMMANDS.map((c) => [c.join(" "), c] as const))(
    "%s exits 1 with store/not-found and creates nothing",
    async (_name, args) => {
      const cwd = mkdtempSync(path.join(root, "cwd-"));
      const result = await runCli([...args, "--store", STORE], { cwd, timeoutMs: 30_000 });
      expect(result.code, result.stderr + result.stdout).toBe(1);
      expect(result.stderr).toContain("store/not-found");
      expect(result.stderr).toContain(STORE);
      expect(result.stderr).toContain(path.join(cwd, "typo/ledger.db"));
      expect(tree(cwd)).toEqual([]);
    },
  );

  it("the default store counts too, and a ledger in a parent folder is offered", async () => {
    const project = mkdtempSync(path.join(root, "project-"));
    const made = await runCli(["demo", "--json"], { cwd: project, timeoutMs: 90_000 });
    expect(made.code, made.stderr).toBe(0);
    const sub = path.join(project, "src", "deep");
    mkdirSync(sub, { recursive: true });
    const listed = await runCli(["loops"], { cwd: sub });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain("store/not-found");
    expect(listed.stderr).toContain(
      `did you mean sqlite:${path.join(project, ".warrant/ledger.db")}?`,
    );
    expect(tree(sub)).toEqual([]);
    const typo = await runCli(["pending", "--store", "sqlite:.warrant/ledgr.db"], {
      cwd: project,
    });
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain("did you mean sqlite:.warrant/ledger.db?");
    expect(existsSync(path.join(project, ".warrant/ledgr.db"))).toBe(false);
  });
});

describe("commands that drive create their store", () => {
  it("demo creates the store and its folders inside the current folder", async () => {
    const cwd = mkdtempSync(path.join(root, "creates-"));
    const r = await runCli(["demo", "--json", "--store", "sqlite:a/b/ledger.db"], {
      cwd,
      timeoutMs: 90_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(cwd, "a/b/ledger.db"))).toBe(true);
  });

  it("demo refuses to create folders outside the current folder (store/folder-missing)", async () => {
    const cwd = mkdtempSync(path.join(root, "outside-"));
    const away = path.join(root, "not-made", "deeper", "ledger.db");
    const r = await runCli(["demo", "--store", `sqlite:${away}`], { cwd, timeoutMs: 90_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("store/folder-missing");
    expect(r.stderr).toContain(`mkdir -p ${path.dirname(away)}`);
    expect(existsSync(path.join(root, "not-made"))).toBe(false);
  });
});
