// The README's `## Library` program, as a user would meet it, and warrant/testing's contract suites
// as an outside implementation runs them: the package is packed (`npm pack`,
// once), its tarball unpacked as `node_modules/warrant` of an empty project, the program type-checked
// there with `tsc --strict` (NodeNext) against the installed package's declarations, compiled, and
// run with node: it must print every event's kind and, last, `succeeded`. The package's own
// dependencies are linked from this checkout's node_modules (the registry is not needed).
import { execFileSync, spawnSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/cli.js";

/** The first ```ts block under the README's `## Library` heading. */
function libraryBlock(readme: string): string {
  const section = readme.split(/^## /m).find((s) => s.startsWith("Library\n"));
  if (section === undefined) throw new Error("the README has no ## Library section");
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error("the ## Library section has no ts block");
  return block;
}

/**
 * Every id the library hands out (a listing, a pending approval, a record, an event) goes back into
 * its methods as it is; a plain string still does not (the ids stay typed).
 */
const IDS_PROGRAM = `import { createWarrant, type WarrantEvent } from "warrant";

const warrant = await createWarrant({ store: "memory:", onEvent: (e: WarrantEvent) => {
  void warrant.show(e.query);
} });
for (const loop of await warrant.loops()) {
  await warrant.show(loop.query);
  await warrant.cancel(loop.query);
  if (loop.waiting?.reason === "approval") await warrant.record(loop.waiting.run);
}
for (const p of await warrant.pending()) {
  await warrant.record(p.proposal);
  await warrant.answer(p.query, "yes");
  await warrant.approve(p.run, p.step);
}
const view = await warrant.show((await warrant.loops())[0]?.query ?? (await warrant.open("pack.json")));
for (const r of view?.records ?? []) {
  const record = await warrant.record(r.ref);
  if (record !== undefined) await warrant.show(record.query);
}
// @ts-expect-error a plain string is not a QueryId: text from outside goes through toQueryId
await warrant.show("query:typed-by-hand");
await warrant.close();
`;

const project = mkdtempSync(path.join(tmpdir(), "warrant-readme-"));
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** Unpacks the tarball `npm pack` makes as node_modules/warrant, and links its dependencies. */
function install(): void {
  const out = execFileSync(
    "npm",
    ["pack", "--json", "--ignore-scripts", "--pack-destination", project],
    { cwd: repoRoot, encoding: "utf8" },
  );
  const [packed] = JSON.parse(out) as { filename: string }[];
  const modules = path.join(project, "node_modules");
  mkdirSync(modules, { recursive: true });
  execFileSync("tar", ["-xzf", path.join(project, packed?.filename ?? ""), "-C", modules]);
  renameSync(path.join(modules, "package"), path.join(modules, "warrant"));
  const pkg = JSON.parse(readFileSync(path.join(modules, "warrant/package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  // vitest: the optional peer the contract suites of warrant/testing are run with.
  for (const dep of [...Object.keys(pkg.dependencies), "@types/node", "vitest"]) {
    const link = path.join(modules, dep);
    mkdirSync(path.dirname(link), { recursive: true });
    symlinkSync(path.join(repoRoot, "node_modules", dep), link, "dir");
  }
}

describe("the README's Library program against the packed package", () => {
  beforeAll(() => {
    install();
    writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({ name: "uses-warrant", private: true, type: "module" }),
    );
    writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          types: ["node"],
          outDir: "out",
          skipLibCheck: false,
        },
        files: ["main.ts", "ids.ts"],
      }),
    );
    writeFileSync(
      path.join(project, "main.ts"),
      libraryBlock(readFileSync(path.join(repoRoot, "README.md"), "utf8")),
    );
    writeFileSync(path.join(project, "ids.ts"), IDS_PROGRAM);
  }, 120_000);

  it("type-checks with tsc --strict (NodeNext), runs, prints each event's kind and `succeeded`", {
    timeout: 120_000,
  }, () => {
    const tsc = spawnSync(
      process.execPath,
      [path.join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", project],
      { cwd: project, encoding: "utf8" },
    );
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
    const run = spawnSync(process.execPath, [path.join(project, "out/main.js")], {
      cwd: project,
      encoding: "utf8",
      timeout: 90_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines.at(-1)).toBe("succeeded");
    for (const kind of [
      "fact",
      "drive-start",
      "passage-start",
      "model-call-end",
      "run-end",
      "stop",
    ])
      expect(lines).toContain(kind);
    // The loop listed, shown and its first record read, with the ids as the library gave them.
    expect(lines.at(-2)).toBe("binding");
    expect(lines.at(-3)).toBe("drive-end");
  });

  it("the package resolves `warrant` only through its exports: deep imports are refused", () => {
    const deep = spawnSync(
      process.execPath,
      ["--input-type=module", "-e", 'await import("warrant/dist/src/library/compose.js")'],
      { cwd: project, encoding: "utf8" },
    );
    expect(deep.status).not.toBe(0);
    expect(deep.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });
});

/**
 * An outside implementation's test file: it imports the contract suites from the installed
 * warrant/testing and runs them, with vitest's functions, against the memory store and the fake
 * sandbox (as it would against its own store or sandbox).
 */
const SUITES_TEST = `import * as vitest from "vitest";
import {
  changeFeedContract,
  type ContractSubject,
  fakeSandbox,
  leaseContract,
  ledgerStoreContract,
  memoryStore,
  sandboxContract,
} from "warrant/testing";

const fresh = async (): Promise<ContractSubject> => ({ store: memoryStore() });
ledgerStoreContract("outside: memory", fresh, vitest);
vitest.describe("the lease and change-feed suites alone", () => {
  leaseContract(fresh, vitest);
  changeFeedContract(fresh, vitest);
});
sandboxContract("outside: fake", async () => fakeSandbox(), vitest);
`;

describe("warrant/testing's contract suites from the packed package", () => {
  it("type-check against the installed declarations and pass under vitest", {
    timeout: 240_000,
  }, () => {
    const dir = path.join(project, "suites");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "contracts.test.ts"), SUITES_TEST);
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          types: ["node"],
          noEmit: true,
          skipLibCheck: true,
        },
        files: ["contracts.test.ts"],
      }),
    );
    const tsc = spawnSync(
      process.execPath,
      [path.join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", dir],
      { cwd: dir, encoding: "utf8" },
    );
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
    const run = spawnSync(
      process.execPath,
      [
        path.join(project, "node_modules/vitest/vitest.mjs"),
        "run",
        "--root",
        dir,
        "--reporter=json",
      ],
      { cwd: dir, encoding: "utf8", timeout: 200_000, env: { ...process.env, CI: "1" } },
    );
    expect(run.status, run.stderr.slice(-4000)).toBe(0);
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf("{"))) as {
      numTotalTests: number;
      numPassedTests: number;
      numFailedTests: number;
    };
    expect(report.numFailedTests).toBe(0);
    // The store suite (with its lease, memory and change-feed parts), the two alone, the sandbox's
    // (a check the memory store has no storage for is skipped).
    expect(report.numPassedTests).toBeGreaterThan(50);
  });
});
