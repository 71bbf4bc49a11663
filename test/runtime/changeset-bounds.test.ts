// Keeping a verified run's change is bounded host work: contents are read only while the walk was
// complete, the runtime's clock is before the capture's deadline and they fit; the record's whole
// size — paths, digests, findings, contents — stays within its bound. The environment is a fake:
// what is under test is the capture, not a sandbox.
import { describe, expect, it } from "vitest";
import type { Environment, EnvironmentChanges } from "../../src/core/ports/sandbox.js";
import { digestOfBytes } from "../../src/core/records/canonical.js";
import { fail, ok, type Problem } from "../../src/core/result.js";
import { CHANGESET_MAX_BYTES, captureChangeset } from "../../src/runtime/changeset.js";

const bytes = (s: string) => new TextEncoder().encode(s);

/** A fake environment holding `files` (path → content); every read advances `clock` by `tick`. */
function fakeEnv(files: Map<string, string>, clock: { now: number }, tick = 0) {
  const reads: string[] = [];
  const env: Environment = {
    id: "x",
    backend: "fake",
    mode: "copy",
    root: "/nowhere",
    exec: async () => {
      throw new Error("no commands here");
    },
    readFile: async () => fail([{ code: "sandbox/not-found", path: "", message: "none" }]),
    async readPart(p, maxBytes) {
      reads.push(p);
      clock.now += tick;
      const b = bytes(files.get(p) ?? "");
      return ok({ bytes: b.subarray(0, maxBytes), truncated: b.length > maxBytes });
    },
    readBaseline: async () => undefined,
    writeFile: async (path) => ok({ path }),
    removeFile: async (path) => ok({ path }),
    snapshot: async () => new Map(),
    changes: async () => {
      throw new Error("the walk is given");
    },
    connections: () => undefined,
    destroy: async () => ({ confirmed: true }),
  };
  return { env, reads };
}

function added(files: Map<string, string>, complete = true, findings: Problem[] = []) {
  const changes: EnvironmentChanges = {
    added: [...files].map(([path, content]) => ({ path, digest: digestOfBytes(bytes(content)) })),
    modified: [],
    deleted: [],
    findings,
    complete,
  };
  return changes;
}

const about = {
  query: "q",
  proposalRef: "proposal:p",
  environmentRef: "environment:x",
  baselineDir: "/baseline",
  ignore: [],
};

const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe("change capture's bounds", () => {
  it("a small complete change is kept whole, contents included", async () => {
    const files = new Map([
      ["src/a.txt", "a\n"],
      ["src/b.txt", "b\n"],
    ]);
    const clock = { now: 0 };
    const { env } = fakeEnv(files, clock);
    const c = await captureChangeset(env, added(files), about, {
      now: () => clock.now,
      deadline: 30_000,
      timeMs: 30_000,
    });
    expect(c.complete).toBe(true);
    expect(c.files.map((f) => [f.path, f["after/content"]])).toEqual([
      ["src/a.txt", Buffer.from("a\n").toString("base64")],
      ["src/b.txt", Buffer.from("b\n").toString("base64")],
    ]);
  });

  it("past the deadline on the runtime's clock, no more contents are read: the change is listed, incomplete", async () => {
    const files = new Map(Array.from({ length: 10 }, (_, i) => [`src/f${i}`, `${i}`] as const));
    const clock = { now: 0 };
    // Each read takes 1 s on the runtime's clock; the capture may take 2.5 s.
    const { env, reads } = fakeEnv(files, clock, 1000);
    const c = await captureChangeset(env, added(files), about, {
      now: () => clock.now,
      deadline: 2500,
      timeMs: 2500,
    });
    expect(reads).toHaveLength(3);
    expect(c.complete).toBe(false);
    expect(c.skipped?.map((s) => s.code)).toEqual(["environment/too-many-changes"]);
    expect(c.skipped?.[0]?.message).toContain("2500 ms");
    // Every change is still listed, from the walk's digests, and no contents are kept.
    expect(c.files).toHaveLength(10);
    expect(c.files.every((f) => f["after/content"] === undefined)).toBe(true);
    expect(c.files[9]?.after).toBe(digestOfBytes(bytes("9")));
  });

  it("an incomplete walk reads no contents at all", async () => {
    const files = new Map([["src/a.txt", "a"]]);
    const clock = { now: 0 };
    const { env, reads } = fakeEnv(files, clock);
    const walkStopped: Problem = {
      code: "environment/too-many-changes",
      path: "",
      message: "more than 1 changed entries",
    };
    const c = await captureChangeset(env, added(files, false, [walkStopped]), about, {
      now: () => clock.now,
      deadline: 30_000,
      timeMs: 30_000,
    });
    expect(reads).toEqual([]);
    expect(c.complete).toBe(false);
    expect(c.skipped?.map((s) => s.code)).toEqual([
      "environment/too-many-changes",
      "changeset/walk-incomplete",
    ]);
    expect(c.files.map((f) => f.path)).toEqual(["src/a.txt"]);
  });

  it("contents past the bound are left out, every file still listed", async () => {
    const files = new Map(
      Array.from({ length: 4 }, (_, i) => [`f${i}`, "x".repeat(1500)] as const),
    );
    const clock = { now: 0 };
    const { env } = fakeEnv(files, clock);
    const bound = { now: () => clock.now, deadline: 30_000, timeMs: 30_000 };
    const c = await captureChangeset(env, added(files), about, bound, 5000);
    expect(c.complete).toBe(false);
    expect(c.skipped?.map((s) => s.code)).toEqual(["changeset/too-large"]);
    expect(c.files).toHaveLength(4);
    expect(c.files.every((f) => f["after/content"] === undefined)).toBe(true);
    expect(size(c)).toBeLessThanOrEqual(5000);
  });

  it("the whole record counts against the bound: many long paths are cut to a listing that fits", async () => {
    const long = "d".repeat(200);
    const files = new Map(
      Array.from(
        { length: 5000 },
        (_, i) => [`${long}/${String(i).padStart(5, "0")}`, "1"] as const,
      ),
    );
    const clock = { now: 0 };
    const { env } = fakeEnv(files, clock);
    const bound = { now: () => clock.now, deadline: 30_000, timeMs: 30_000 };
    const max = 200_000;
    const c = await captureChangeset(env, added(files), about, bound, max);
    // Contents are one byte each: only the listing's own size passes the bound.
    expect(size(c)).toBeLessThanOrEqual(max);
    expect(c.complete).toBe(false);
    expect(c.skipped?.map((s) => s.code)).toEqual(["changeset/too-large", "changeset/too-large"]);
    expect(c.files.length).toBeGreaterThan(0);
    expect(c.files.length).toBeLessThan(5000);
    // A prefix, in path order.
    expect(c.files.map((f) => f.path)).toEqual([...files.keys()].slice(0, c.files.length));
  });

  it("the default bound is 8 MiB for the whole record", () => {
    expect(CHANGESET_MAX_BYTES).toBe(8 << 20);
  });
});
