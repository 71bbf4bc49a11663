// `warrant run --json` where a step breaks its environment's resource limit, on each backend named
// with --sandbox: the step is recorded `environment/limit` with the limit hit, the run concludes
// refused `run/budget-exhausted` (the nearest loop refusal code), and the loop checks valid. Then
// the choice of backend itself: --sandbox, WARRANT_SANDBOX, auto, and a named backend that is not
// there (PATH without its program) refused `sandbox/unavailable` with exit 2.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { memoryCgroups } from "../../src/adapters/sandbox/resource-limits.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import type { RunReportBody } from "../../src/runtime/records.js";
import { runCli } from "../helpers/cli.js";
import { commandModels, commandPack } from "./command-pack.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const MiB = 1 << 20;

const pack = (dir: string, argv: readonly string[]) =>
  commandPack(dir, argv, {
    name: "limits",
    resources: { memoryBytes: 64 * MiB, tmpBytes: 2 * MiB, diskBytes: 4 * MiB },
  });
const models = commandModels;

async function reportOf(cwd: string, query: string): Promise<RunReportBody> {
  const store = await openStore(`sqlite:${path.join(cwd, ".warrant/ledger.db")}`);
  try {
    const reports = (await store.listRecords(query)).filter((x) => x.kind === "runReport");
    expect(reports).toHaveLength(1);
    return reports[0]?.body as RunReportBody;
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

// Memory is seen (and recorded) where a memory cgroup can be made; RLIMIT_DATA alone only refuses.
const cgroupHere = (await memoryCgroups(true).parent()) !== undefined;
const breaches: [string, readonly string[], number][] = [
  ["tmp", ["sh", "-c", "head -c 8388608 /dev/zero > /tmp/big"], 2 * MiB],
  ["disk", ["sh", "-c", "head -c 8388608 /dev/zero > src/big"], 4 * MiB],
  ...(cgroupHere
    ? [
        ["memory", ["python3", "-c", "b = b'x' * (256 * 1024 * 1024)"], 64 * MiB] as [
          string,
          string[],
          number,
        ],
      ]
    : []),
];

describe.skipIf(backends.length === 0)(
  `a run over its resource limits${skipped.length === 0 ? "" : ` (not here: ${skipped.join("; ")})`}`,
  () => {
    for (const backend of backends) {
      for (const [resource, argv, bytes] of breaches) {
        it(`${backend}: a step past the ${resource} limit is recorded environment/limit; the run is refused run/budget-exhausted`, async () => {
          const cwd = mkdtempSync(path.join(tmpdir(), "warrant-limits-run-"));
          dirs.push(cwd);
          const r = await runCli(
            ["run", pack(cwd, argv), "--json", "--sandbox", backend, ...models(cwd)],
            { cwd, timeoutMs: 120_000 },
          );
          expect(r.stderr).toContain(`run started in a fresh environment (${backend}`);
          const out = JSON.parse(r.stdout) as { query: string; stop: { reason: string } };
          const report = await reportOf(cwd, out.query);
          expect([report.outcome, report["refusal/code"]]).toEqual([
            "refused",
            "run/budget-exhausted",
          ]);
          const step = report.steps.find((s) => s["step/id"] === "work");
          expect(step).toMatchObject({
            status: "failed",
            refusal: "environment/limit",
            limit: { resource, bytes },
          });
          expect(step?.findings?.[0]?.code).toBe("environment/limit");
          expect(report["environment/destroyed"]).toBe(true);
          const check = await runCli(
            [
              "loop",
              "check",
              "--store",
              `sqlite:${path.join(cwd, ".warrant/ledger.db")}`,
              out.query,
              "--json",
            ],
            { cwd },
          );
          expect(check.code, check.stdout + check.stderr).toBe(0);
        }, 180_000);
      }
    }
  },
);

describe.skipIf(backends.length < 2)("choosing the backend", () => {
  const quiet = ["sh", "-c", "echo fine"];
  const drive = async (args: readonly string[], env: NodeJS.ProcessEnv = {}) => {
    const cwd = mkdtempSync(path.join(tmpdir(), "warrant-choose-"));
    dirs.push(cwd);
    const r = await runCli(["run", pack(cwd, quiet), "--json", ...args, ...models(cwd)], {
      cwd,
      env,
      timeoutMs: 120_000,
    });
    return { ...r, opened: existsSync(path.join(cwd, ".warrant")) };
  };
  // A PATH with node but neither bwrap nor unshare on it.
  const bare = mkdtempSync(path.join(tmpdir(), "warrant-bare-path-"));
  dirs.push(bare);

  it("--sandbox names the backend every run uses, and WARRANT_SANDBOX does when it is absent", async () => {
    for (const backend of ["bwrap", "unshare"] as const) {
      const r = await drive(["--sandbox", backend]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`run started in a fresh environment (${backend}`);
    }
    const viaEnv = await drive([], { WARRANT_SANDBOX: "unshare" });
    expect(viaEnv.stderr).toContain("run started in a fresh environment (unshare");
    // The flag wins over the variable.
    const both = await drive(["--sandbox", "bwrap"], { WARRANT_SANDBOX: "unshare" });
    expect(both.stderr).toContain("run started in a fresh environment (bwrap");
  }, 300_000);

  it("auto keeps the order: bwrap where it works", async () => {
    const r = await drive(["--sandbox", "auto"]);
    expect(r.stderr).toContain("run started in a fresh environment (bwrap");
  }, 120_000);

  it("a named backend that is not here is sandbox/unavailable, exit 2, and no loop is opened", async () => {
    for (const [args, env] of [
      [["--sandbox", "bwrap"], { PATH: bare }],
      [[], { PATH: bare, WARRANT_SANDBOX: "unshare" }],
    ] as const) {
      const r = await drive(args, env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.opened).toBe(false);
      expect(r.stderr).toMatch(
        /sandbox\/unavailable: the (bwrap|unshare) sandbox backend is unavailable here: (bwrap|unshare) is not on PATH/,
      );
    }
  }, 120_000);

  it("every command that makes environments offers --sandbox and --allow-weaker-sandbox in its help", async () => {
    for (const command of ["run", "resume", "demo", "worker"]) {
      const r = await runCli([command, "--help"]);
      expect(r.code, command).toBe(0);
      expect(r.stdout, command).toContain("--sandbox <backend>");
      expect(r.stdout, command).toContain("WARRANT_SANDBOX");
      expect(r.stdout, command).toContain("--allow-weaker-sandbox");
    }
  }, 60_000);

  it.skipIf(process.getuid?.() !== 0)(
    "a TMPDIR under a 0700 folder is refused sandbox/tmpdir-unreachable, naming the folder and its mode (skipped unless root: commands then run as another uid)",
    async () => {
      const outer = mkdtempSync(path.join(tmpdir(), "warrant-private-"));
      dirs.push(outer);
      chmodSync(outer, 0o700);
      const temp = path.join(outer, "tmp");
      mkdirSync(temp);
      chmodSync(temp, 0o1777);
      for (const backend of ["bwrap", "unshare"] as const) {
        const r = await drive(["--sandbox", backend], { TMPDIR: temp });
        expect(r.code, r.stderr).toBe(2);
        expect(r.opened).toBe(false);
        expect(r.stderr).toContain("sandbox/tmpdir-unreachable");
        expect(r.stderr).toContain(`${outer} is mode 0700`);
        expect(r.stderr).not.toContain("sandbox/unavailable");
      }
      // auto says the same cause; every run is then refused, none is made.
      const auto = await drive(["--sandbox", "auto"], { TMPDIR: temp });
      expect(auto.stderr).toContain("sandbox/tmpdir-unreachable");
      expect(auto.stderr).toContain(`${outer} is mode 0700`);
      expect(readdirSync(temp)).toEqual([]);
    },
    180_000,
  );

  it("a value that names no backend is a usage error", async () => {
    const flag = await drive(["--sandbox", "docker"]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain(
      "sandbox/invalid-choice: --sandbox takes one of auto, bwrap, unshare",
    );
    const env = await drive([], { WARRANT_SANDBOX: "none" });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain("sandbox/invalid-choice: WARRANT_SANDBOX takes one of");
  }, 60_000);
});
