// Observation command profiles as passage tools, on the real containment backend: only observation
// profiles are offered, arguments are checked before anything runs, each call runs in a fresh
// contained copy of the baseline that is gone when the call answers, and limits are reported.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { detectSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import { createProfileTools, profileToolSpecs } from "../../src/adapters/tools/profile-tools.js";
import type { Sandbox } from "../../src/core/ports/sandbox.js";
import { validateTaskPack } from "../../src/core/taskpack/validate-task-pack.js";
import { createToolRegistry } from "../../src/core/turn/tool-registry.js";
import { containedBaseline } from "./contained-baseline.js";

const noArgs = { type: "object", additionalProperties: false, properties: {} };
const observe = (argv: string[], extra: Record<string, unknown> = {}) => ({
  effect: "observation",
  argv,
  args: noArgs,
  timeoutMs: 10_000,
  maxOutputBytes: 65_536,
  ...extra,
});

const packDoc = {
  schema: "warrant/task-pack.v1",
  name: "profile-tools",
  task: "exercise the profile tools",
  workspace: "workspace",
  agents: { implementer: "implementer.json", reviewer: "reviewer.json" },
  commands: {
    "write-note": observe([
      "sh",
      "-c",
      "echo changed > note.txt && echo added > new.txt && cat note.txt && ls && pwd",
    ]),
    "show-file": observe(["cat", "{file}"], {
      args: {
        type: "object",
        required: ["file"],
        properties: { file: { type: "string", minLength: 1 } },
        additionalProperties: false,
      },
    }),
    fails: observe(["sh", "-c", "echo before; echo oops >&2; exit 3"]),
    chatty: observe(["sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done"], {
      maxOutputBytes: 100,
    }),
    slow: observe(["sh", "-c", "echo started; sleep 30"], { timeoutMs: 400 }),
    "apply-fix": {
      effect: "mutation",
      argv: ["sh", "-c", "echo fixed > note.txt"],
      args: noArgs,
      timeoutMs: 10_000,
      maxOutputBytes: 4096,
    },
  },
  patchPolicy: { allow: ["**"], maxBytes: 4096 },
  verifier: { timeoutMs: 10_000, checks: [{ name: "fails", command: "fails" }] },
  hil: "none",
  admission: "auto",
  limits: { "max/passages": 4 },
};

const validated = validateTaskPack(packDoc);
if (!validated.ok) throw new Error(JSON.stringify(validated.errors));
const pack = validated.value;

const { baseline, envRoot } = containedBaseline("profile-tools");

const detected = await detectSandbox({ tempRoot: envRoot });
const reason = detected.ok ? "" : (detected.errors[0]?.message ?? "no backend");

/** The real backend, counting the environments it is asked for. */
function counting(sandbox: Sandbox): { sandbox: Sandbox; created: () => number } {
  let created = 0;
  return {
    sandbox: {
      backend: sandbox.backend,
      environmentMode: () => sandbox.environmentMode(),
      openBaseline: (dir) => sandbox.openBaseline(dir),
      createEnvironment: (dir, opts) => {
        created++;
        return sandbox.createEnvironment(dir, opts);
      },
      discardEnvironment: (name) => sandbox.discardEnvironment(name),
      discardEnvironmentAt: (root) => sandbox.discardEnvironmentAt(root),
    },
    created: () => created,
  };
}

/** The environments left under the backend's folder (the pinned baseline is not one). */
function environments(): string[] {
  return readdirSync(envRoot).filter((n) => n.startsWith("warrant-env-"));
}

function baselineFiles(): Record<string, string> {
  return Object.fromEntries(
    readdirSync(baseline).map((f) => [f, readFileSync(path.join(baseline, f), "utf8")]),
  );
}

describe.skipIf(!detected.ok)(
  `profile tools on the detected backend${detected.ok ? "" : ` (skipped: no containment backend works here: ${reason})`}`,
  () => {
    const real = detected.ok ? detected.value : (undefined as unknown as Sandbox);
    const host = () => {
      const c = counting(real);
      return {
        ...c,
        tools: createProfileTools({
          commands: pack.commands,
          baselineDir: baseline,
          sandbox: c.sandbox,
        }),
      };
    };

    it("offers only the observation profiles, as profile.<name> with the profile's argument schema", () => {
      const { tools } = host();
      const specs = tools.specs();
      expect(specs.map((s) => s.name)).toEqual([
        "profile.write-note",
        "profile.show-file",
        "profile.fails",
        "profile.chatty",
        "profile.slow",
      ]);
      expect(specs.every((s) => s.effect === "observation")).toBe(true);
      const show = specs.find((s) => s.name === "profile.show-file");
      expect(show?.inputSchema).toEqual(packDoc.commands["show-file"].args);
      expect(show?.description).toContain("cat {file}");
      expect(profileToolSpecs(pack.commands)).toEqual(specs);
      expect(createToolRegistry(specs).ok).toBe(true);
    });

    it("never runs a mutation profile: it is no tool", async () => {
      const { tools, created } = host();
      const r = await tools.call("profile.apply-fix", {});
      expect(r).toMatchObject({ ok: false, isError: true, code: "tool/unknown" });
      expect(created()).toBe(0);
      expect(baselineFiles()).toEqual({ "note.txt": "original\n" });
    });

    it("refuses arguments outside the profile's schema before any environment is made", async () => {
      const { tools, created } = host();
      for (const args of [{}, { file: 3 }, { file: "note.txt", extra: true }, { file: "" }]) {
        const r = await tools.call("profile.show-file", args);
        expect(r).toMatchObject({ ok: false, isError: true, code: "tool/arguments-invalid" });
        expect(r.content).toContain("show-file");
      }
      expect((await tools.call("profile.fails", { unexpected: 1 })).code).toBe(
        "tool/arguments-invalid",
      );
      expect(created()).toBe(0);
      expect(environments()).toEqual([]);
    });

    it("a cancelled call runs nothing", async () => {
      const { tools, created } = host();
      const r = await tools.call("profile.write-note", {}, { signal: AbortSignal.abort() });
      expect(r.code).toBe("tool/aborted");
      expect(created()).toBe(0);
    });

    it("runs contained in a fresh copy: its writes never reach the baseline, and the environment is gone after the call", async () => {
      const { tools, created } = host();
      const r = await tools.call("profile.write-note", {});
      expect(r).toMatchObject({ ok: true, isError: false });
      expect(r.content).toContain("exit: 0");
      expect(r.content).toContain("changed");
      expect(r.content).toContain("new.txt");
      expect(r.content).not.toContain("timed out");
      // It ran in an environment made under the backend's folder, which is empty again.
      expect(r.content).toContain(`${envRoot}/`);
      expect(baselineFiles()).toEqual({ "note.txt": "original\n" });
      expect(environments()).toEqual([]);

      // A later call gets a fresh copy: the earlier call's write is not there.
      const shown = await tools.call("profile.show-file", { file: "note.txt" });
      expect(shown).toMatchObject({ ok: true, isError: false });
      expect(shown.content).toContain("$ cat note.txt");
      expect(shown.content).toContain("original");
      expect(shown.content).not.toContain("changed");
      expect(created()).toBe(2);
      expect(environments()).toEqual([]);
      // Both calls shared one pinned baseline, given back when the host closes.
      expect(readdirSync(envRoot).filter((n) => n.startsWith("warrant-base-"))).toHaveLength(1);
      await tools.close?.();
      expect(readdirSync(envRoot)).toEqual([]);
    });

    it("a command that exits non-zero is an answer flagged as an error, with both streams", async () => {
      const { tools } = host();
      const r = await tools.call("profile.fails", {});
      expect(r).toMatchObject({ ok: true, isError: true });
      expect(r.content).toContain("exit: 3");
      expect(r.content).toMatch(/--- stdout\nbefore/);
      expect(r.content).toMatch(/--- stderr\noops/);
    });

    it("reports output cut at the profile's limit", async () => {
      const { tools } = host();
      const r = await tools.call("profile.chatty", {});
      expect(r.ok).toBe(true);
      expect(r.content).toContain("truncated: yes, output past 100 bytes dropped");
      expect(r.content).not.toContain("line-1999");
    });

    it("reports the profile's time limit: tool/timeout with what it printed, and the environment is gone", async () => {
      const { tools } = host();
      const r = await tools.call("profile.slow", {});
      expect(r).toMatchObject({ ok: false, isError: true, code: "tool/timeout" });
      expect(r.content).toContain("timed out: yes, after the profile's 400 ms");
      expect(r.content).toContain("started");
      expect(environments()).toEqual([]);
    });

    it("an environment the backend cannot make is tool/sandbox, not a rejection", async () => {
      const tools = createProfileTools({
        commands: pack.commands,
        baselineDir: path.join(envRoot, "..", "no-such-baseline"),
        sandbox: real,
      });
      const r = await tools.call("profile.write-note", {});
      expect(r).toMatchObject({ ok: false, isError: true, code: "tool/sandbox" });
      expect(r.content).toContain("profile.write-note");
      expect(environments()).toEqual([]);
    });

    it("a shorter time limit of the call applies over the profile's", async () => {
      const { tools } = host();
      const r = await tools.call("profile.slow", {}, { timeoutMs: 100 });
      expect(r.code).toBe("tool/timeout");
      expect(r.content).toContain("after the profile's 100 ms");
    });
  },
);
