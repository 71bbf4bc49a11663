// `warrant definition …` and `warrant cid …` (docs/spec/cli.md), run as a user runs them: the built CLI.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { full, minimal, text } from "./fixtures.js";

const dir = mkdtempSync(path.join(tmpdir(), "warrant-definition-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Uint8Array): string {
  const p = path.join(dir, name);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
  return p;
}

const valid = file("valid.json", text(full()));
const invalid = file(
  "invalid.json",
  '{\n  "schema": "viper/agent-definition/v1",\n  "name": "x",\n  "framework": {"name": "w"},\n  "models": [{"provider": "p", "model": "m"}],\n  "prompts": [{"role": "system"}]\n}\n',
);

describe("warrant definition validate", () => {
  it("prints one line per valid file with its ID and exits 0", async () => {
    const r = await runCli(["definition", "validate", valid]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${valid}: valid baga6yaq6[a-z2-7]+\\n$`));
  });

  it("prints a JSON array of {file, valid, id?, errors} and exits 1 when any is invalid", async () => {
    const r = await runCli(["definition", "validate", valid, invalid, "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toHaveLength(2);
    expect(Object.keys(out[0])).toEqual(["file", "valid", "id", "errors"]);
    expect(out[0]).toMatchObject({ file: valid, valid: true, errors: [] });
    expect(out[1]).toEqual({
      file: invalid,
      valid: false,
      errors: [
        {
          code: "definition/prompt-source",
          path: "/prompts/0",
          message: "a prompt has exactly one of content and contentCid",
        },
      ],
    });
  });

  it("prints each error as file, pointer, line:column, code and what to change", async () => {
    const r = await runCli(["definition", "validate", invalid]);
    expect(r.code).toBe(1);
    expect(r.stdout.trim()).toBe(
      `${invalid} /prompts/0 6:15: definition/prompt-source: a prompt has exactly one of content and contentCid`,
    );
  });

  it("refuses bytes that are not UTF-8 as definition/json", async () => {
    const bad = file("latin1.json", Uint8Array.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
    const r = await runCli(["definition", "validate", bad, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)[0].errors[0].code).toBe("definition/json");
  });

  it("exits 2 on a missing file or no file at all", async () => {
    const missing = await runCli(["definition", "validate", valid, path.join(dir, "nope.json")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.json/);
    expect((await runCli(["definition", "validate"])).code).toBe(2);
  });
});

describe("warrant definition id / normalize", () => {
  it("prints the content ID on one line, the one validate reports", async () => {
    const r = await runCli(["definition", "id", valid]);
    expect(r.code).toBe(0);
    const v = JSON.parse((await runCli(["definition", "validate", valid, "--json"])).stdout);
    expect(r.stdout).toBe(`${v[0].id}\n`);
  });

  it("gives two spellings one ID and one normalised form", async () => {
    const usual = file("usual.json", text(minimal()));
    const alt = file(
      "alt.json",
      '{"models":[["scripted","demo/minimal"]],"framework":["warrant"],"name":"minimal","schema":"viper/agent-definition/v1","version":null}',
    );
    const [a, b] = await Promise.all([
      runCli(["definition", "normalize", usual]),
      runCli(["definition", "normalize", alt]),
    ]);
    expect(a.code).toBe(0);
    expect(b.stdout).toBe(a.stdout);
    expect(a.stdout).toBe(
      '{"framework":{"name":"warrant"},"models":[{"model":"demo/minimal","provider":"scripted"}],"name":"minimal","schema":"viper/agent-definition/v1"}\n',
    );
    expect((await runCli(["definition", "id", alt])).stdout).toBe(
      (await runCli(["definition", "id", usual])).stdout,
    );
  });

  it("refuses an invalid definition with its errors on stderr and exit 1", async () => {
    const r = await runCli(["definition", "id", invalid]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/definition\/prompt-source/);
    const j = await runCli(["definition", "normalize", invalid, "--json"]);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({
      valid: false,
      errors: [{ code: "definition/prompt-source" }],
    });
  });
});

describe("warrant cid", () => {
  it("blob: the docs/spec vector for 'hello'", async () => {
    const r = await runCli(["cid", "blob", file("hello.txt", "hello")]);
    expect(r).toMatchObject({
      code: 0,
      stdout: "bafkr4ihkr4ld3m4gqkjf4reryxsy2s5tkbxprqkow6fin2iiyvreuzzab4\n",
    });
    const j = await runCli(["cid", "blob", path.join(dir, "hello.txt"), "--json"]);
    expect(JSON.parse(j.stdout)).toEqual({
      cid: "bafkr4ihkr4ld3m4gqkjf4reryxsy2s5tkbxprqkow6fin2iiyvreuzzab4",
    });
  });

  it("collection: the docs/spec vector for abc.txt and def.txt", async () => {
    file("coll/abc.txt", "abc");
    file("coll/def.txt", "def");
    const r = await runCli(["cid", "collection", path.join(dir, "coll")]);
    expect(r).toMatchObject({
      code: 0,
      stdout: "bagaachraifnmn56rqtgbdxx5x2zvasw4slukuq2t7w3iefcmsqldn7axmrpq\n",
    });
  });

  it("exits 2 on a missing path", async () => {
    expect((await runCli(["cid", "blob", path.join(dir, "missing")])).code).toBe(2);
    expect((await runCli(["cid", "collection", path.join(dir, "missing")])).code).toBe(2);
  });
});

describe("examples/agents", () => {
  it("are valid, and docs/definitions.md lists their IDs", async () => {
    const root = path.resolve(import.meta.dirname, "../..");
    const files = readdirSync(path.join(root, "examples/agents"))
      .filter((f) => f.endsWith(".json"))
      .map((f) => path.join("examples/agents", f));
    expect(files.map((f) => path.basename(f)).sort()).toEqual([
      "adversarial-critic.json",
      "config-fixer.json",
      "config-reviewer.json",
      "implementer.json",
      "reviewer.json",
      "summarizer.json",
    ]);
    const r = await runCli(["definition", "validate", "--json", ...files]);
    expect(r.code).toBe(0);
    const doc = readFileSync(path.join(root, "docs/definitions.md"), "utf8");
    for (const v of JSON.parse(r.stdout) as Array<{ file: string; id: string }>) {
      expect(doc).toContain(`| \`${v.file}\` | \`${v.id}\` |`);
    }
  });
});
