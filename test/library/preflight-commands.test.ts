// What run --check adds to the preflight: each command profile's program looked up in a real
// sandbox on the baseline (a name on the sandbox's PATH, a path in the workspace, a toolchain's bin/,
// the profile's own PATH; a placeholder program is the plan's), and no toolchain holding the store
// or the host key — refused by the preflight and by createWarrant before a loop opens.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadPack } from "../../src/adapters/fs/pack-loader.js";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { createWarrant } from "../../src/library/create-warrant.js";
import { preflight } from "../../src/library/preflight.js";
import { toolchainHoldings } from "../../src/library/preflight-commands.js";
import type { LoadedPack } from "../../src/runtime/task-pack.js";
import { repoRoot } from "../helpers/cli.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-preflight-commands-"));
chmodSync(work, 0o711);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const profile = (argv: string[], env?: Record<string, string>) => ({
  effect: "observation",
  argv,
  args: {
    type: "object",
    additionalProperties: false,
    properties: argv.includes("{prog}") ? { prog: { type: "string" } } : {},
    ...(argv.includes("{prog}") ? { required: ["prog"] } : {}),
  },
  timeoutMs: 5000,
  maxOutputBytes: 4096,
  ...(env === undefined ? {} : { env }),
});

async function packWith(name: string, extra: Record<string, unknown>): Promise<LoadedPack> {
  const dir = path.join(work, name);
  mkdirSync(path.join(dir, "workspace/scripts"), { recursive: true });
  writeFileSync(path.join(dir, "workspace/scripts/check.sh"), "#!/bin/sh\necho ok\n", {
    mode: 0o755,
  });
  writeFileSync(path.join(dir, "workspace/scripts/not-executable.sh"), "echo no\n");
  mkdirSync(path.join(dir, "tool/bin"), { recursive: true });
  writeFileSync(path.join(dir, "tool/bin/mytool"), "#!/bin/sh\necho tool\n", { mode: 0o755 });
  mkdirSync(path.join(dir, "extra-bin"), { recursive: true });
  writeFileSync(path.join(dir, "extra-bin/onlyhere"), "#!/bin/sh\n", { mode: 0o755 });
  const agents = path.join(repoRoot, "examples/agents");
  const file = path.join(dir, "task-pack.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "warrant/task-pack.v1",
      name: "commands",
      task: "Look the programs up.",
      workspace: "workspace",
      agents: {
        implementer: path.join(agents, "implementer.json"),
        reviewer: path.join(agents, "reviewer.json"),
      },
      commands: {
        "on-path": profile(["sh", "-c", "true"]),
        "in-workspace": profile(["scripts/check.sh"]),
        "not-executable": profile(["scripts/not-executable.sh"]),
        absent: profile(["no-such-program-anywhere"]),
        "from-toolchain": profile(["mytool"]),
        "chosen-by-plan": profile(["{prog}"]),
        "own-path": profile(["onlyhere"], { PATH: "/usr/bin:/bin" }),
      },
      patchPolicy: { allow: ["**"], maxBytes: 4096 },
      verifier: { timeoutMs: 10000, checks: [{ name: "c", command: "on-path" }] },
      hil: "none",
      admission: "auto",
      limits: {
        "max/passages": 4,
        "max/cycles": 1,
        "max/experiments": 1,
        "max/wall-time-ms": 60000,
      },
      toolchains: [path.join(dir, "tool")],
      ...extra,
    }),
  );
  const loaded = await loadPack(file);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  return loaded.value;
}

const sandbox = createBwrapSandbox({ tempRoot: work });

describe("the commands check (run --check)", () => {
  it("finds each profile's program as its command would, and names the profile and program it cannot find", async () => {
    const pack = await packWith("lookup", {});
    const report = await preflight({ pack, models: {}, env: {}, sandbox: async () => sandbox }, []);
    const row = report.checks.find((c) => c.name === "commands");
    expect(row?.notes).toEqual([
      "on-path: sh found",
      "in-workspace: scripts/check.sh found",
      "from-toolchain: mytool found",
    ]);
    expect(report.problems.map((p) => [p.code, p.path])).toEqual([
      ["preflight/command-not-found", "/commands/not-executable/argv/0"],
      ["preflight/command-not-found", "/commands/absent/argv/0"],
      ["preflight/command-not-found", "/commands/own-path/argv/0"],
    ]);
    expect(report.problems[1]?.message).toBe(
      "the command profile absent runs no-such-program-anywhere, which the sandbox does not have on its PATH (a program installed outside the system folders is there only when the pack lists its folder in toolchains)",
    );
    expect(report.ok).toBe(false);
    // Nothing was left behind: the environment and the pin are gone.
    expect(readdirSync(work).filter((n) => n.startsWith("warrant-"))).toEqual([]);
  });

  it("says it looked nothing up where no sandbox works", async () => {
    const pack = await packWith("none", {});
    const report = await preflight(
      { pack, models: {}, env: {}, sandbox: async () => undefined },
      [],
    );
    expect(report.checks).toEqual([
      {
        name: "commands",
        ok: true,
        notes: ["no containment backend here: the profiles' programs were not looked up"],
      },
    ]);
  });
});

describe("a toolchain holding the store or the host key", () => {
  it("is refused by the preflight and by createWarrant before any loop opens", async () => {
    const pack = await packWith("holding", {});
    const tool = pack.pack.toolchains[0] as string;
    const store = `sqlite:${path.join(tool, "ledger.db")}`;
    expect((await toolchainHoldings(pack, store)).map((p) => [p.code, p.path])).toEqual([
      ["taskpack/toolchain-forbidden", "/toolchains/0"],
    ]);
    // The key of a store kept elsewhere is in .warrant/ of the folder it is used from.
    expect(await toolchainHoldings(pack, "memory:", tool)).toHaveLength(1);
    expect(await toolchainHoldings(pack, "memory:", work)).toEqual([]);
    const elsewhere = `sqlite:${path.join(work, "ledger.db")}`;
    expect(await toolchainHoldings(pack, elsewhere)).toEqual([]);
    // The host's key folder ($WARRANT_KEY_DIR) inside a toolchain is refused the same way.
    const before = process.env.WARRANT_KEY_DIR;
    process.env.WARRANT_KEY_DIR = path.join(tool, "keys");
    try {
      expect((await toolchainHoldings(pack, elsewhere)).map((p) => p.message)).toEqual([
        `the toolchain ${tool} holds the host's key folder (${path.join(tool, "keys")}): every command could read it`,
      ]);
    } finally {
      if (before === undefined) delete process.env.WARRANT_KEY_DIR;
      else process.env.WARRANT_KEY_DIR = before;
    }

    const report = await preflight({ pack, models: {}, env: {}, store }, []);
    expect(report.problems.map((p) => [p.check, p.code])).toEqual([
      ["toolchains", "taskpack/toolchain-forbidden"],
    ]);
    const warrant = await createWarrant({ store: "memory:", cwd: tool, sandbox: "none" });
    try {
      await expect(warrant.open(pack)).rejects.toMatchObject({
        code: "taskpack/toolchain-forbidden",
      });
      expect(await warrant.loops()).toEqual([]);
    } finally {
      await warrant.close();
    }
  });
});
