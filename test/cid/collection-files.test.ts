// The directory walk for collection CIDs on a real file system.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  collectionCidOfPath,
  collectionFiles,
  hashFile,
} from "../../src/adapters/fs/collection-files.js";
import { blake3Digest } from "../../src/core/cid/cid.js";
import { collectionCid } from "../../src/core/cid/collection.js";

const root = mkdtempSync(path.join(tmpdir(), "warrant-collection-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function dir(name: string, files: Record<string, string>): string {
  const d = path.join(root, name);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(d, rel)), { recursive: true });
    writeFileSync(path.join(d, rel), content);
  }
  mkdirSync(d, { recursive: true });
  return d;
}

describe("collection files", () => {
  it("gives the docs/spec vector for a directory of abc.txt and def.txt", async () => {
    const d = dir("vector", { "abc.txt": "abc", "def.txt": "def" });
    expect(await collectionCidOfPath(d)).toBe(
      "bagaachraifnmn56rqtgbdxx5x2zvasw4slukuq2t7w3iefcmsqldn7axmrpq",
    );
  });

  it("includes hidden files and nested directories, skips symlinks, sorts by UTF-8 bytes", async () => {
    const d = dir("skill", {
      "SKILL.md": "# s",
      ".hidden": "h",
      "sub/.env.example": "X=1",
      "sub/deeper/b.txt": "b",
      "\uff5e.txt": "tilde",
      "😀.txt": "smile",
    });
    mkdirSync(path.join(d, "empty"));
    symlinkSync(path.join(d, "SKILL.md"), path.join(d, "link.md"));
    symlinkSync(path.join(d, "sub"), path.join(d, "linkdir"));
    const files = await collectionFiles(d);
    expect(files.map((f) => f.name)).toEqual([
      ".hidden",
      "SKILL.md",
      "sub/.env.example",
      "sub/deeper/b.txt",
      "\uff5e.txt",
      "😀.txt",
    ]);
    const enc = new TextEncoder();
    expect(await collectionCidOfPath(d)).toBe(
      collectionCid([
        { name: ".hidden", bytes: enc.encode("h") },
        { name: "SKILL.md", bytes: enc.encode("# s") },
        { name: "sub/.env.example", bytes: enc.encode("X=1") },
        { name: "sub/deeper/b.txt", bytes: enc.encode("b") },
        { name: "\uff5e.txt", bytes: enc.encode("tilde") },
        { name: "😀.txt", bytes: enc.encode("smile") },
      ]),
    );
  });

  it("follows the root when it is itself a link", async () => {
    const d = dir("target", { "abc.txt": "abc", "def.txt": "def" });
    const link = path.join(root, "root-link");
    symlinkSync(d, link);
    expect(await collectionCidOfPath(link)).toBe(await collectionCidOfPath(d));
  });

  it("treats a single file as a collection of one named by its last segment", async () => {
    const d = dir("single", { "AGENTS.md": "be careful" });
    expect(await collectionCidOfPath(path.join(d, "AGENTS.md"))).toBe(
      collectionCid([{ name: "AGENTS.md", bytes: new TextEncoder().encode("be careful") }]),
    );
  });

  it("hashes a file larger than one read chunk", async () => {
    const big = new Uint8Array(3 * (1 << 20) + 17).map((_, i) => i % 251);
    const file = path.join(root, "big.bin");
    writeFileSync(file, big);
    expect(await hashFile(file)).toEqual(blake3Digest(big));
  });

  it("streams files too large to read whole, among small ones, in name order", async () => {
    const d = path.join(root, "mixed");
    mkdirSync(d);
    const big = new Uint8Array(5 * (1 << 20) + 3).map((_, i) => (i * 7) % 256);
    writeFileSync(path.join(d, "m-big.bin"), big);
    const small = Array.from({ length: 20 }, (_, i) => [`s-${String(i).padStart(2, "0")}`, `${i}`]);
    for (const [name, content] of small)
      writeFileSync(path.join(d, name as string), content as string);
    const enc = new TextEncoder();
    expect(await collectionCidOfPath(d)).toBe(
      collectionCid([
        { name: "m-big.bin", bytes: big },
        ...small.map(([name, content]) => ({ name: name as string, bytes: enc.encode(content) })),
      ]),
    );
  });

  it("fails on a path that does not exist", async () => {
    await expect(collectionCidOfPath(path.join(root, "missing"))).rejects.toThrow(/ENOENT/);
  });
});
