// The contract every Sandbox backend must meet (docs/spec/containment.md), run against each backend available.
import { randomBytes } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { applyPatchStep } from "../../src/adapters/sandbox/apply-patch-step.js";
import type {
  Environment,
  EnvironmentMode,
  EnvironmentOptions,
  ExecOptions,
  Sandbox,
} from "../../src/core/ports/sandbox.js";
import { checkPlan } from "../../src/core/taskpack/plan-check.js";
import { validPack } from "../taskpack/fixtures.js";
import { hostileTreeContract } from "./hostile-tree-contract.js";

const LIMITS: ExecOptions = { timeoutMs: 10_000, maxOutputBytes: 1 << 20 };
const text = (s: string) => new TextEncoder().encode(s);

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.setTimeout(2000);
    socket.on("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
    socket.on("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Node's pids whose command line carries `marker` (only ever our own test processes). */
function processesWith(marker: string): string[] {
  return readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  });
}

/** A workspace file as the environment's commands see it; undefined when they cannot read it. */
async function seen(env: Environment, rel: string): Promise<string | undefined> {
  const r = await env.exec(["cat", "--", rel], LIMITS);
  return r.exitCode === 0 ? r.stdout : undefined;
}

async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 50) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

export function containmentContract(
  name: string,
  sandbox: Sandbox | undefined,
  skipReason: string,
  mode: EnvironmentMode,
): void {
  describe.skipIf(sandbox === undefined)(
    `containment contract: ${name}${sandbox === undefined ? ` (skipped: ${skipReason})` : ""}`,
    () => {
      let work: string;
      let baseline: string;
      let outsideDir: string;
      let outsideFile: string;
      const envs: Environment[] = [];

      const fresh = async (opts: EnvironmentOptions = {}): Promise<Environment> => {
        const env = await (sandbox as Sandbox).createEnvironment(baseline, {
          maxProcesses: 64,
          ...opts,
        });
        envs.push(env);
        return env;
      };

      beforeAll(() => {
        work = mkdtempSync(path.join(tmpdir(), "warrant-contract-"));
        baseline = path.join(work, "baseline");
        outsideDir = path.join(work, "outside");
        outsideFile = path.join(outsideDir, "secret.txt");
        mkdirSync(path.join(baseline, "src"), { recursive: true });
        mkdirSync(path.join(baseline, "test"));
        mkdirSync(outsideDir);
        writeFileSync(outsideFile, "outside\n");
        writeFileSync(path.join(baseline, "src/a.js"), "export const a = 1;\n");
        writeFileSync(path.join(baseline, "test/a.test.js"), "// test\n");
        symlinkSync(outsideDir, path.join(baseline, "src/escape-dir"));
        symlinkSync(outsideFile, path.join(baseline, "src/escape-file.js"));
        symlinkSync("a.js", path.join(baseline, "src/alias.js"));
      });

      afterEach(async () => {
        for (const env of envs.splice(0)) await env.destroy();
      });

      afterAll(() => rmSync(work, { recursive: true, force: true }));

      it("reports its backend and runs in a copy of the baseline at its own root", async () => {
        const env = await fresh();
        expect(env.backend).toBe((sandbox as Sandbox).backend);
        expect(env.mode).toBe(mode);
        expect(env.root).not.toBe(baseline);
        const r = await env.exec(["sh", "-c", 'pwd; echo "$HOME"; cat src/a.js'], LIMITS);
        expect(r.exitCode).toBe(0);
        expect(r.stdout).toBe(`${env.root}\n${env.root}\nexport const a = 1;\n`);
      });

      it("reports exit status, separate streams and a digest of the output", async () => {
        const env = await fresh();
        const r = await env.exec(["sh", "-c", "echo out; echo err >&2; exit 3"], LIMITS);
        expect(r).toMatchObject({
          exitCode: 3,
          signal: null,
          timedOut: false,
          cancelled: false,
          truncated: false,
        });
        expect(r.stdout).toBe("out\n");
        expect(r.stderr).toBe("err\n");
        expect(r.outputDigest).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
        const again = await env.exec(["sh", "-c", "echo out; echo err >&2; exit 3"], LIMITS);
        expect(again.outputDigest).toBe(r.outputDigest);
        const other = await env.exec(["sh", "-c", "echo err; echo out >&2"], LIMITS);
        expect(other.outputDigest).not.toBe(r.outputDigest);
        expect(Date.parse(r.endedAt)).toBeGreaterThanOrEqual(Date.parse(r.startedAt));
      });

      it("a connection to the host's loopback listeners fails inside; only loopback exists", async () => {
        const server: Server = createServer((s) => {
          s.on("error", () => undefined);
          s.end("hello");
        });
        await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
        const port = (server.address() as { port: number }).port;
        try {
          expect(await canConnect(port)).toBe(true);
          const ports = [port];
          // PostgreSQL listens on the host's 127.0.0.1:5432 on the development and CI machines.
          if (await canConnect(5432)) ports.push(5432);
          const env = await fresh();
          for (const p of ports) {
            const script = `require("net").connect(${p}, "127.0.0.1").on("connect", () => { console.log("connected"); process.exit(0); }).on("error", (e) => { console.log(e.code); process.exit(7); })`;
            const r = await env.exec(["node", "-e", script], LIMITS);
            expect(r.stdout).not.toContain("connected");
            expect(r.exitCode).toBe(7);
          }
          const dev = await env.exec(["cat", "/proc/net/dev"], LIMITS);
          const ifaces = dev.stdout
            .split("\n")
            .slice(2)
            .filter((l) => l.includes(":"))
            .map((l) => l.split(":")[0]?.trim());
          expect(ifaces).toEqual(["lo"]);
        } finally {
          server.close();
        }
      });

      // Under unshare the loopback is brought up with iproute2's `ip`, when the host has it.
      const noIp =
        sandbox?.backend === "unshare" &&
        !["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].some((p) => existsSync(p));
      it.skipIf(noIp)(
        `a command may use its own loopback, which is not the host's${noIp ? " (skipped: no ip binary to bring lo up)" : ""}`,
        async () => {
          const env = await fresh();
          const script = `const net = require("net"); const s = net.createServer((c) => c.end("pong")).listen(0, "127.0.0.1", () => { net.connect(s.address().port, "127.0.0.1").on("data", (d) => { console.log(String(d)); process.exit(0); }); });`;
          const r = await env.exec(["node", "-e", script], LIMITS);
          expect(r.stdout).toBe("pong\n");
        },
      );

      it("a write outside the workspace fails; the workspace itself is writable", async () => {
        const env = await fresh();
        const marker = `warrant-contract-${process.pid}-${Date.now()}`;
        const targets = [
          "/etc/warrant-probe",
          "/usr/warrant-probe",
          "/warrant-probe",
          path.join(outsideDir, "new"),
          outsideFile,
        ];
        for (const t of targets) {
          const r = await env.exec(["sh", "-c", 'echo x > "$1"', "sh", t], LIMITS);
          expect(r.exitCode, t).not.toBe(0);
        }
        expect(readFileSync(outsideFile, "utf8")).toBe("outside\n");
        expect(existsSync(path.join(outsideDir, "new"))).toBe(false);
        // /tmp is private: a file made there, even beside the workspace's host path, is not on the host.
        const beside = path.join(path.dirname(env.root), "escape");
        await env.exec(["sh", "-c", 'echo x > "$1"', "sh", beside], LIMITS);
        expect(existsSync(beside)).toBe(false);
        const tmp = await env.exec(
          ["sh", "-c", `echo x > /tmp/${marker} && cat /tmp/${marker}`],
          LIMITS,
        );
        expect(tmp.exitCode).toBe(0);
        expect(existsSync(`/tmp/${marker}`)).toBe(false);
        const ok = await env.exec(["sh", "-c", "echo new > src/made.js"], LIMITS);
        expect(ok.exitCode).toBe(0);
        expect(await seen(env, "src/made.js")).toBe("new\n");
      });

      it("the rest of the host's file system is absent, the repository included", async () => {
        const env = await fresh();
        const r = await env.exec(
          ["sh", "-c", 'test -e "$1" && echo visible || echo absent', "sh", baseline],
          LIMITS,
        );
        expect(r.stdout).toBe("absent\n");
        const home = await env.exec(
          ["sh", "-c", "test -e /root/.bashrc -o -e /work && echo visible || echo absent"],
          LIMITS,
        );
        expect(home.stdout).toBe("absent\n");
      });

      it("no API key reaches the environment", async () => {
        const saved = process.env.OPENAI_API_KEY;
        process.env.OPENAI_API_KEY = "sk-contract-test-secret";
        try {
          const env = await fresh();
          const r = await env.exec(["env"], {
            ...LIMITS,
            env: { ANTHROPIC_API_KEY: "sk-ant-secret", GITHUB_TOKEN: "t", HOME: "/", FOO: "bar" },
          });
          expect(r.exitCode).toBe(0);
          expect(r.stdout).not.toContain("sk-contract-test-secret");
          expect(r.stdout).not.toContain("OPENAI_API_KEY");
          expect(r.stdout).not.toContain("sk-ant-secret");
          expect(r.stdout).not.toContain("GITHUB_TOKEN");
          expect(r.stdout).toContain("FOO=bar");
          expect(r.stdout).toContain(`HOME=${env.root}`);
        } finally {
          if (saved === undefined) delete process.env.OPENAI_API_KEY;
          else process.env.OPENAI_API_KEY = saved;
        }
      });

      it("a runaway process is killed at its time limit", async () => {
        const env = await fresh();
        const sleeper = await env.exec(["sleep", "1000"], { ...LIMITS, timeoutMs: 300 });
        expect(sleeper.timedOut).toBe(true);
        expect(sleeper.exitCode).not.toBe(0);
        const busy = await env.exec(["sh", "-c", "while :; do :; done"], {
          ...LIMITS,
          timeoutMs: 300,
        });
        expect(busy.timedOut).toBe(true);
      });

      it("no process of a killed command survives, background children included", async () => {
        const env = await fresh();
        const marker = `warrant-runaway-${process.pid}-${Date.now()}`;
        const keep = `setInterval(() => {}, 1000) // ${marker}`;
        const r = await env.exec(["sh", "-c", 'node -e "$1" & node -e "$1" & wait', "sh", keep], {
          ...LIMITS,
          timeoutMs: 1500,
        });
        expect(r.timedOut).toBe(true);
        expect(await eventually(() => processesWith(marker).length === 0)).toBe(true);
      });

      it("cancellation kills the command and reports it", async () => {
        const env = await fresh();
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 200);
        const r = await env.exec(["sleep", "1000"], { ...LIMITS, signal: controller.signal });
        expect(r).toMatchObject({ cancelled: true, timedOut: false });
      });

      it("output past its byte limit is cut and flagged", async () => {
        const env = await fresh();
        const big = await env.exec(
          ["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a; echo tail >&2"],
          { ...LIMITS, maxOutputBytes: 1000 },
        );
        expect(big.truncated).toBe(true);
        expect(big.stdout.length + big.stderr.length).toBe(1000);
        expect(big.stdout).toBe("a".repeat(1000));
        const small = await env.exec(["sh", "-c", "head -c 1000 /dev/zero | tr '\\0' a"], {
          ...LIMITS,
          maxOutputBytes: 1000,
        });
        expect(small.truncated).toBe(false);
        expect(small.stdout.length).toBe(1000);
      });

      it("the process-count limit holds", async () => {
        const env = await fresh();
        const script = "i=0; while [ $i -lt 40 ]; do sleep 100 & i=$((i+1)); done; echo forked-all";
        const r = await env.exec(["sh", "-c", script], {
          ...LIMITS,
          timeoutMs: 5000,
          maxProcesses: 8,
        });
        expect(r.stdout).not.toContain("forked-all");
        expect(r.timedOut).toBe(false);
        const fine = await env.exec(["sh", "-c", "sleep 0 & sleep 0 & wait; echo ok"], {
          ...LIMITS,
          maxProcesses: 8,
        });
        expect(fine.stdout).toBe("ok\n");
      });

      it("writeFile writes inside and refuses .. and absolute paths", async () => {
        const env = await fresh();
        const w = await env.writeFile("src/deep/new.js", text("x\n"));
        expect(w).toEqual({ ok: true, value: { path: "src/deep/new.js" } });
        expect(await seen(env, "src/deep/new.js")).toBe("x\n");
        const edit = await env.exec(
          ["sh", "-c", "echo y >> src/deep/new.js && cat src/deep/new.js"],
          LIMITS,
        );
        expect(edit.stdout).toBe("x\ny\n");
        for (const bad of ["../escape.js", "src/../../escape.js", "/etc/passwd", ".git/config"]) {
          const r = await env.writeFile(bad, text("x"));
          expect(r.ok ? "" : r.errors[0]?.code, bad).toBe("workbench/patch-outside-policy");
        }
        expect(existsSync(path.join(path.dirname(env.root), "escape.js"))).toBe(false);
        const underFile = await env.writeFile("src/a.js/inner.js", text("x"));
        expect(underFile.ok ? "" : underFile.errors[0]?.code).toBe("sandbox/write-failed");
      });

      it("writeFile refuses a path through a symlink that leaves the workspace", async () => {
        const env = await fresh();
        const viaDir = await env.writeFile("src/escape-dir/planted.js", text("x"));
        expect(viaDir.ok ? "" : viaDir.errors[0]?.detail?.reason).toBe("symlink-escape");
        const viaFile = await env.writeFile("src/escape-file.js", text("pwned"));
        expect(viaFile.ok ? "" : viaFile.errors[0]?.code).toBe("workbench/patch-outside-policy");
        expect(readFileSync(outsideFile, "utf8")).toBe("outside\n");
        expect(existsSync(path.join(outsideDir, "planted.js"))).toBe(false);
        const read = await env.readFile("src/escape-file.js");
        expect(read.ok ? "" : read.errors[0]?.code).toBe("workbench/patch-outside-policy");
        // A symlink made by a command inside the environment is no way out either.
        await env.exec(["ln", "-s", "/", "src/root"], LIMITS);
        const viaMade = await env.writeFile("src/root/tmp/planted.js", text("x"));
        expect(viaMade.ok ? "" : viaMade.errors[0]?.detail?.reason).toBe("symlink-escape");
        // A symlink that stays inside is followed.
        const alias = await env.writeFile("src/alias.js", text("export const a = 2;\n"));
        expect(alias.ok).toBe(true);
        expect(await seen(env, "src/a.js")).toBe("export const a = 2;\n");
      });

      it("a symlink to a sibling of the workspace path (<root>-x/) is refused, though -x/ exists inside", async () => {
        const env = await fresh();
        // The target shares the workspace path as a prefix, without its separator: only the
        // confinement check decides (a prefix test without "/" would read the inner -x/f).
        await env.exec(
          ["sh", "-c", 'mkdir -- -x && echo inner > -x/f && ln -s "$PWD-x/f" src/sib', "sh"],
          LIMITS,
        );
        expect(await seen(env, "-x/f")).toBe("inner\n");
        const read = await env.readFile("src/sib");
        expect(read.ok ? "" : read.errors[0]?.detail?.reason).toBe("symlink-escape");
        const write = await env.writeFile("src/sib", text("x"));
        expect(write.ok ? "" : write.errors[0]?.detail?.reason).toBe("symlink-escape");
        expect(await seen(env, "-x/f")).toBe("inner\n");
      });

      it("an admitted patch is applied inside, and refused through an escaping symlink", async () => {
        const env = await fresh();
        const pack = validPack();
        const diff =
          "--- a/src/a.js\n+++ b/src/a.js\n@@ -1 +1 @@\n-export const a = 1;\n+export const a = 3;\n";
        const plan = (path: string, change: Record<string, string>) =>
          checkPlan(
            {
              hypothesis: "h",
              steps: [
                { id: "o", action: "observe", read: ["src/a.js"] },
                { id: "p", action: "patch", path, ...change },
              ],
            },
            pack,
          );
        const good = plan("src/a.js", { diff });
        if (!good.ok) throw new Error(JSON.stringify(good.errors));
        const step = good.value.steps[1];
        if (step?.kind !== "patch") throw new Error("not a patch");
        expect(await applyPatchStep(env, step)).toMatchObject({
          ok: true,
          value: { path: "src/a.js" },
        });
        expect(await seen(env, "src/a.js")).toBe("export const a = 3;\n");
        const again = await applyPatchStep(env, step);
        expect(again.ok ? "" : again.errors[0]?.code).toBe("patch/hunk-failed");
        // `src/escape-dir/…` and `src/escape-file.js` are inside the policy (src/**): the plan
        // check admits them; the write is still refused because their real paths leave.
        for (const p of ["src/escape-dir/planted.js", "src/escape-file.js"]) {
          const admitted = plan(p, { content: "pwned\n" });
          if (!admitted.ok) throw new Error(JSON.stringify(admitted.errors));
          const s = admitted.value.steps[1];
          if (s?.kind !== "patch") throw new Error("not a patch");
          const r = await applyPatchStep(env, s);
          expect(r.ok ? "" : r.errors[0]?.code, p).toBe("workbench/patch-outside-policy");
        }
        expect(readFileSync(outsideFile, "utf8")).toBe("outside\n");
        expect(existsSync(path.join(outsideDir, "planted.js"))).toBe(false);
      });

      it("a patch may create a file from /dev/null and delete one to /dev/null", async () => {
        const env = await fresh();
        const pack = validPack();
        const step = (p: string, diff: string) => {
          const r = checkPlan(
            {
              hypothesis: "h",
              steps: [
                { id: "o", action: "observe", read: ["src/a.js"] },
                { id: "p", action: "patch", path: p, diff },
              ],
            },
            pack,
          );
          if (!r.ok) throw new Error(JSON.stringify(r.errors));
          const s = r.value.steps[1];
          if (s?.kind !== "patch") throw new Error("not a patch");
          return s;
        };
        const create = step(
          "src/n/new.js",
          "--- /dev/null\n+++ b/src/n/new.js\n@@ -0,0 +1 @@\n+new\n",
        );
        expect(await applyPatchStep(env, create)).toMatchObject({ ok: true });
        expect(await seen(env, "src/n/new.js")).toBe("new\n");
        const remove = step(
          "src/a.js",
          "--- a/src/a.js\n+++ /dev/null\n@@ -1 +0,0 @@\n-export const a = 1;\n",
        );
        expect(await applyPatchStep(env, remove)).toEqual({
          ok: true,
          value: { path: "src/a.js", digest: null },
        });
        expect(await seen(env, "src/a.js")).toBeUndefined();
        const missing = await applyPatchStep(env, remove);
        expect(missing.ok ? "" : missing.errors[0]?.code).toBe("patch/target-missing");
      });

      it("readFile, removeFile and snapshot see the workspace", async () => {
        const env = await fresh();
        const before = await env.snapshot();
        expect([...before.keys()].sort()).toEqual([
          "src/a.js",
          "src/alias.js",
          "src/escape-dir",
          "src/escape-file.js",
          "test/a.test.js",
        ]);
        expect(before.get("src/alias.js")).toMatch(/^symlink:sha256:/);
        const r = await env.readFile("src/a.js");
        expect(r.ok && new TextDecoder().decode(r.value)).toBe("export const a = 1;\n");
        const missing = await env.readFile("src/none.js");
        expect(missing.ok ? "" : missing.errors[0]?.code).toBe("sandbox/not-found");
        await env.exec(["sh", "-c", "echo changed > src/a.js"], LIMITS);
        expect(await env.removeFile("test/a.test.js")).toEqual({
          ok: true,
          value: { path: "test/a.test.js" },
        });
        const after = await env.snapshot();
        expect(after.get("src/a.js")).not.toBe(before.get("src/a.js"));
        expect(after.has("test/a.test.js")).toBe(false);
      });

      it("environments are fresh and independent; the baseline is never touched", async () => {
        const a = await fresh();
        const b = await fresh();
        expect(a.id).not.toBe(b.id);
        await a.exec(["sh", "-c", "echo changed > src/a.js"], LIMITS);
        const seen = await b.exec(["cat", "src/a.js"], LIMITS);
        expect(seen.stdout).toBe("export const a = 1;\n");
        expect(readFileSync(path.join(baseline, "src/a.js"), "utf8")).toBe("export const a = 1;\n");
        const peek = await b.exec(
          ["sh", "-c", 'test -e "$1" && echo visible || echo absent', "sh", a.root],
          LIMITS,
        );
        expect(peek.stdout).toBe("absent\n");
      });

      it("a named environment lives at warrant-env-<name>; creating it again replaces a leftover", async () => {
        const sb = sandbox as Sandbox;
        const name = `contract-${randomBytes(6).toString("hex")}`;
        const base = path.join(tmpdir(), `warrant-env-${name}`);
        const dead = await sb.createEnvironment(baseline, { name });
        expect(dead.root).toBe(path.join(base, "workspace"));
        expect(statSync(base).mode & 0o777).toBe(0o700);
        // What a process that died mid-run leaves: a changed file, a locked folder, a stray file.
        const r = await dead.exec(
          ["sh", "-c", "echo changed > src/a.js && mkdir -p locked/in && chmod 555 locked"],
          LIMITS,
        );
        expect(r.exitCode).toBe(0);
        writeFileSync(path.join(base, "stray"), "left\n");
        // `dead` is never destroyed: its process is gone.
        const again = await sb.createEnvironment(baseline, { name });
        // `dead` is destroyed after `again` only to give back the baseline it pinned.
        envs.push(again, dead);
        expect(again.root).toBe(dead.root);
        expect(again.id).not.toBe(dead.id);
        expect(existsSync(path.join(base, "stray"))).toBe(false);
        expect(statSync(base).mode & 0o777).toBe(0o700);
        const seen = await again.exec(
          ["sh", "-c", "cat src/a.js; test -e locked && echo locked || echo clean"],
          LIMITS,
        );
        expect(seen.stdout).toBe("export const a = 1;\nclean\n");
      });

      it("a symlink planted at a named environment's path is replaced, its target untouched", async () => {
        const name = `contract-${randomBytes(6).toString("hex")}`;
        const base = path.join(tmpdir(), `warrant-env-${name}`);
        symlinkSync(outsideDir, base);
        try {
          const env = await (sandbox as Sandbox).createEnvironment(baseline, { name });
          envs.push(env);
          expect(lstatSync(base).isDirectory()).toBe(true);
          expect(readdirSync(outsideDir)).toEqual(["secret.txt"]);
        } finally {
          rmSync(base, { recursive: true, force: true });
        }
      });

      it("discardEnvironment removes what is left of a named environment, and confirms", async () => {
        const sb = sandbox as Sandbox;
        const name = `contract-${randomBytes(6).toString("hex")}`;
        const left = await sb.createEnvironment(baseline, { name });
        const running = left.exec(["sleep", "1000"], LIMITS);
        await left.exec(["sh", "-c", "mkdir -p locked/in && chmod 555 locked"], LIMITS);
        expect(await sb.discardEnvironment(name)).toEqual({ confirmed: true });
        expect(existsSync(path.dirname(left.root))).toBe(false);
        // Nothing there (any more) is confirmed too.
        expect(await sb.discardEnvironment(name)).toEqual({ confirmed: true });
        await left.destroy();
        await running;
      });

      it("refuses a name that is not a safe token (sandbox/invalid-name)", async () => {
        const sb = sandbox as Sandbox;
        for (const bad of ["", "..", "../x", "a/b", "Upper", "a_b", "a b", "a".repeat(65)]) {
          await expect(sb.createEnvironment(baseline, { name: bad })).rejects.toMatchObject({
            code: "sandbox/invalid-name",
          });
          await expect(sb.discardEnvironment(bad)).rejects.toMatchObject({
            code: "sandbox/invalid-name",
          });
        }
        expect(readdirSync(tmpdir()).filter((n) => n === "warrant-env-")).toEqual([]);
      });

      hostileTreeContract({
        sandbox: () => sandbox as Sandbox,
        mode,
        fresh,
        baseline: () => baseline,
        outsideFile: () => outsideFile,
      });

      it("destroy removes the directory, confirms it, and ends running commands", async () => {
        const env = await (sandbox as Sandbox).createEnvironment(baseline);
        expect(existsSync(env.root)).toBe(true);
        const running = env.exec(["sleep", "1000"], LIMITS);
        await new Promise((r) => setTimeout(r, 100));
        expect(await env.destroy()).toEqual({ confirmed: true });
        expect((await running).cancelled).toBe(true);
        expect(existsSync(env.root)).toBe(false);
        expect(existsSync(path.dirname(env.root))).toBe(false);
        await expect(env.exec(["true"], LIMITS)).rejects.toThrow(/destroyed/);
        expect(await env.destroy()).toEqual({ confirmed: true });
      });
    },
  );
}
