// `warrant turn check`: output shapes and exit codes of docs/spec/cli.md, against the built CLI.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { callTurn, messageTurn, PAYLOADS, READ_FILE } from "./fixtures.js";

let dir: string;
let tools: string;

function file(name: string, value: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof value === "string" ? value : JSON.stringify(value));
  return p;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "warrant-turn-"));
  const { effect: _e, ...wire } = READ_FILE;
  tools = file("tools.json", [wire]);
});

describe("warrant turn check", () => {
  it("exits 0 with {valid: true, errors: []} for a valid turn", async () => {
    const turn = file("ok.json", callTurn([{ name: "workspace.read_file", args: { path: "a" } }]));
    const r = await runCli(["turn", "check", turn, "--tools", tools, "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ valid: true, errors: [] });
    const human = await runCli(["turn", "check", turn, "--tools", tools]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("valid");
  });

  it("exits 1 with the errors' code, path and message for an invalid turn", async () => {
    const turn = file("bad.json", callTurn([{ name: "workspace.read_file", args: { path: 3 } }]));
    const r = await runCli(["turn", "check", turn, "--tools", tools, "--json"]);
    expect(r.code).toBe(1);
    const body = JSON.parse(r.stdout);
    expect(body.valid).toBe(false);
    expect(body.errors).toHaveLength(1);
    expect(Object.keys(body.errors[0]).sort()).toEqual(["code", "message", "path"]);
    expect(body.errors[0]).toMatchObject({
      code: "turn/arguments-invalid",
      path: "/tool_calls/0/arguments_json",
    });
  });

  it("names the pointer and code per line in human output", async () => {
    const turn = file("two.json", {
      ...messageTurn("Verdict", PAYLOADS.Verdict),
      tool_calls: [{ name: "nope", arguments_json: "{}" }],
    });
    const r = await runCli(["turn", "check", turn, "--tools", tools, "--role", "implementer"]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/ \/tool_calls: turn\/kind-mismatch: /),
        expect.stringMatching(/ \/tool_calls\/0\/name: turn\/unknown-tool: /),
        expect.stringMatching(/ \/message\/type: turn\/type-not-allowed: /),
      ]),
    );
  });

  it("checks the role", async () => {
    const turn = file("result.json", messageTurn("Result", PAYLOADS.Result));
    const ok = await runCli(["turn", "check", turn, "--tools", tools, "--role", "summarizer"]);
    expect(ok.code).toBe(0);
    const no = await runCli([
      "turn",
      "check",
      turn,
      "--tools",
      tools,
      "--role",
      "reviewer",
      "--json",
    ]);
    expect(no.code).toBe(1);
    expect(JSON.parse(no.stdout).errors[0].code).toBe("turn/type-not-allowed");
  });

  it("reports turn/json with the turn file that is not JSON", async () => {
    const turn = file("broken.json", "{ nope");
    const r = await runCli(["turn", "check", turn, "--tools", tools, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errors[0].code).toBe("turn/json");
  });

  it.each([
    [
      "a missing turn file",
      (t: string) => ["turn", "check", path.join(dir, "none.json"), "--tools", t],
    ],
    [
      "a missing tools file",
      () => ["turn", "check", path.join(dir, "ok.json"), "--tools", path.join(dir, "none.json")],
    ],
    ["no --tools", () => ["turn", "check", path.join(dir, "ok.json")]],
    [
      "a bad role",
      (t: string) => ["turn", "check", path.join(dir, "ok.json"), "--tools", t, "--role", "boss"],
    ],
    [
      "a tools file that is not an array",
      () => ["turn", "check", path.join(dir, "ok.json"), "--tools", file("obj.json", {})],
    ],
    [
      "a tools file with a bad tool",
      () => [
        "turn",
        "check",
        path.join(dir, "ok.json"),
        "--tools",
        file("badtool.json", [{ name: "Bad", description: "", inputSchema: {} }]),
      ],
    ],
  ])("exits 2 on %s", async (_what, args) => {
    const r = await runCli(args(tools));
    expect(r.code).toBe(2);
    expect(r.stderr).not.toBe("");
  });
});
