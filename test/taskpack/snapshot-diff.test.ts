import { describe, expect, it } from "vitest";
import { compileGlob, type Glob } from "../../src/core/taskpack/glob.js";
import {
  changedOutside,
  changedUnder,
  diffSnapshots,
} from "../../src/core/taskpack/snapshot-diff.js";

const g = (s: string): Glob => {
  const r = compileGlob(s);
  if (!r.ok) throw new Error(s);
  return r.value;
};

describe("snapshot comparison", () => {
  const before = new Map([
    ["src/a.js", "sha256:A"],
    ["test/a.test.js", "sha256:T"],
    ["README.md", "sha256:R"],
  ]);

  it("lists added, removed and changed paths", () => {
    const after = new Map([
      ["src/a.js", "sha256:A2"],
      ["test/a.test.js", "sha256:T"],
      ["src/b.js", "sha256:B"],
    ]);
    expect(diffSnapshots(before, after)).toEqual({
      added: ["src/b.js"],
      removed: ["README.md"],
      changed: ["src/a.js"],
    });
  });

  it("an unchanged check fails on any touched path under its globs", () => {
    const same = diffSnapshots(before, new Map(before));
    expect(changedUnder(same, [g("test/**")])).toEqual([]);
    const after = new Map(before);
    after.set("test/a.test.js", "sha256:T2");
    expect(changedUnder(diffSnapshots(before, after), [g("test/**")])).toEqual(["test/a.test.js"]);
    after.delete("test/a.test.js");
    expect(changedUnder(diffSnapshots(before, after), [g("test/**")])).toEqual(["test/a.test.js"]);
  });

  it("only-allowed-changed lists touched paths outside the allow-list", () => {
    const after = new Map(before);
    after.set("src/a.js", "sha256:A2");
    expect(changedOutside(diffSnapshots(before, after), [g("src/**")])).toEqual([]);
    after.set("package.json", "sha256:P");
    expect(changedOutside(diffSnapshots(before, after), [g("src/**")])).toEqual(["package.json"]);
  });
});
