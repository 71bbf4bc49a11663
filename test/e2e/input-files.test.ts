// Every command that reads an input file takes only a regular file of at most --max-bytes (16 MiB by
// default): a FIFO, a device or a directory is refused at once with exit 2, never read (a FIFO
// with no writer would hang a plain read); a larger file is refused with input/too-large.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MAX_INPUT_BYTES } from "../../src/cli/io.js";
import { runCli } from "../helpers/cli.js";

let dir = "";
let fifo = "";
let big = "";
let small = "";
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "warrant-input-"));
  fifo = path.join(dir, "fifo");
  execFileSync("mkfifo", [fifo]);
  big = path.join(dir, "big.json");
  writeFileSync(big, "");
  // Sparse: refused from its size alone, before a byte is read.
  truncateSync(big, DEFAULT_MAX_INPUT_BYTES + 1);
  small = path.join(dir, "small.json");
  writeFileSync(small, JSON.stringify({ schema: "corpus-task-pack-loop.v1" }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each file-reading command, with FILE where its input goes. */
const COMMANDS: readonly (readonly string[])[] = [
  ["definition", "validate", "FILE"],
  ["definition", "id", "FILE"],
  ["definition", "normalize", "FILE"],
  ["cid", "blob", "FILE"],
  ["turn", "check", "FILE", "--tools", "FILE"],
  ["loop", "simulate", "FILE"],
  ["loop", "check", "FILE"],
];
const withFile = (args: readonly string[], file: string) =>
  args.map((a) => (a === "FILE" ? file : a));

describe("input files", () => {
  for (const args of COMMANDS) {
    const name = args.slice(0, 2).join(" ");
    it(`${name}: a FIFO is refused at once with exit 2 (input/not-regular-file)`, async () => {
      const r = await runCli([...withFile(args, fifo), "--json"], { timeoutMs: 20_000 });
      expect(r.signal).toBeNull();
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("input/not-regular-file");
      expect(r.stderr).toContain("a FIFO");
      expect(r.stdout).toBe("");
    });
    it(`${name}: a directory and a device are refused with exit 2`, async () => {
      for (const [file, kind] of [
        [dir, "a directory"],
        ["/dev/zero", "a character device"],
      ] as const) {
        const r = await runCli(withFile(args, file));
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`input/not-regular-file`);
        expect(r.stderr).toContain(kind);
      }
    });
    it(`${name}: a file over 16 MiB is refused with input/too-large`, async () => {
      const r = await runCli(withFile(args, big));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("input/too-large");
      expect(r.stderr).toContain(`${DEFAULT_MAX_INPUT_BYTES} bytes`);
    });
  }

  it("--max-bytes lowers and raises the limit; a value that is not a positive integer is usage", async () => {
    const low = await runCli(["loop", "check", small, "--max-bytes", "10"]);
    expect(low.code).toBe(2);
    expect(low.stderr).toContain("input/too-large");
    expect(low.stderr).toContain("larger than 10 bytes");
    const raised = await runCli([
      "cid",
      "blob",
      big,
      "--max-bytes",
      String(DEFAULT_MAX_INPUT_BYTES + 1),
    ]);
    expect(raised.code).toBe(0);
    expect(raised.stdout).toMatch(/^bafkr4i/);
    for (const bad of ["0", "-1", "1e3", "x"]) {
      const r = await runCli(["loop", "check", small, "--max-bytes", bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("--max-bytes takes a positive integer");
    }
  });

  it("an input that is there and small is read as before", async () => {
    const r = await runCli(["loop", "check", small, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: false });
  });
});
