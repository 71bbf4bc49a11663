// Writes under a dependency folder are never a change of the run (real bwrap sandbox, scripted
// models): a run whose command rewrites and adds files under node_modules passes `unchanged` and
// `onlyAllowedChanged`, and its changeset (what diff and apply take) holds only the patched file;
// the host's node_modules is untouched. Without the dependency listed, the same writes are changes.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/cli.js";
import { accept, harness, recordsOf, result, turn } from "./harness.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-dep-writes-"));
chmodSync(work, 0o755);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function pack(name: string, dependencies: string[] | undefined): string {
  const dir = path.join(work, name);
  const ws = path.join(dir, "workspace");
  mkdirSync(path.join(ws, "src"), { recursive: true });
  writeFileSync(path.join(ws, "src/a.txt"), "broken\n");
  mkdirSync(path.join(ws, "node_modules/dep"), { recursive: true });
  writeFileSync(path.join(ws, "node_modules/dep/index.js"), "module.exports = 1;\n");
  // The commands' own files, as a user's node_modules are theirs (as root: the uid they run as).
  if (process.getuid?.() === 0)
    execFileSync("chown", ["-R", "65534:65534", path.join(ws, "node_modules")]);
  const agents = path.join(repoRoot, "examples/agents");
  const file = path.join(dir, "task-pack.json");
  writeFileSync(
    file,
    JSON.stringify({
      schema: "warrant/task-pack.v1",
      name: "dependency-writes",
      task: "Make src/a.txt say fixed.",
      workspace: ws,
      agents: {
        implementer: path.join(agents, "implementer.json"),
        reviewer: path.join(agents, "reviewer.json"),
        summarizer: path.join(agents, "summarizer.json"),
      },
      ...(dependencies === undefined ? {} : { dependencies }),
      commands: {
        "build-cache": {
          effect: "observation",
          argv: [
            "sh",
            "-c",
            "echo rebuilt > node_modules/dep/index.js && mkdir -p node_modules/.bin && echo x > node_modules/.bin/tool",
          ],
          args: { type: "object", additionalProperties: false, properties: {} },
          timeoutMs: 10000,
          maxOutputBytes: 4096,
        },
      },
      patchPolicy: { allow: ["src/**"], maxBytes: 4096 },
      verifier: {
        timeoutMs: 30000,
        checks: [
          { name: "build", command: "build-cache" },
          { name: "modules-unchanged", unchanged: ["node_modules/**"] },
          { name: "only-allowed-changed", onlyAllowedChanged: true },
        ],
      },
      hil: "none",
      admission: "auto",
      limits: {
        "max/passages": 6,
        "max/cycles": 1,
        "max/experiments": 1,
        "max/wall-time-ms": 600000,
      },
    }),
  );
  return file;
}

const fix = turn("Plan", {
  hypothesis: "Write the line it must say.",
  steps: [
    { id: "build", action: "observe", profile: "build-cache" },
    { id: "fix", action: "patch", path: "src/a.txt", content: "fixed\n" },
  ],
  expected_checks: ["build", "modules-unchanged", "only-allowed-changed"],
});

describe("writes under a dependency folder", () => {
  it("are never a change: the checks pass and the changeset holds only the patch", async () => {
    const file = pack("listed", ["node_modules"]);
    const h = await harness(
      { implementer: [fix], reviewer: [accept], summarizer: [result] },
      { pack: file },
    );
    const outcome = await h.drive();
    expect(outcome.status === "stopped" && outcome.stop.reason).toBe("succeeded");
    const checks = h.events.flatMap((e) => (e.kind === "check" ? [[e.name, e.passed]] : []));
    expect(checks).toEqual([
      ["build", true],
      ["modules-unchanged", true],
      ["only-allowed-changed", true],
    ]);
    const [changeset] = await recordsOf(h, "changeset");
    const files = (changeset?.body as { files?: { path: string }[] } | undefined)?.files ?? [];
    expect(files.map((f) => f.path)).toEqual(["src/a.txt"]);
    const ws = path.join(path.dirname(file), "workspace");
    expect(readFileSync(path.join(ws, "node_modules/dep/index.js"), "utf8")).toBe(
      "module.exports = 1;\n",
    );
  }, 120_000);

  it("are changes of a plain folder that does not list it", async () => {
    const h = await harness(
      { implementer: [fix], reviewer: [accept], summarizer: [result] },
      { pack: pack("unlisted", undefined) },
    );
    await h.drive();
    const checks = h.events.flatMap((e) => (e.kind === "check" ? [[e.name, e.passed]] : []));
    expect(checks).toEqual([
      ["build", true],
      ["modules-unchanged", false],
      ["only-allowed-changed", false],
    ]);
  }, 120_000);
});
