// Host-side confinement checks, each decided alone by a sibling whose name extends the confining
// folder's (`tree-x/` beside `tree/`): a prefix test without the separator would let it through.
// And the disk watchdog at its boundary: growth of exactly the limit is within it, one byte more
// is a breach.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readConfinedFile } from "../../src/adapters/sandbox/confined-read.js";
import { diskUse, watchDisk } from "../../src/adapters/sandbox/resource-limits.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-confine-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("a baseline read (readConfinedFile)", () => {
  const tree = path.join(work, "tree");
  const sibling = path.join(work, "tree-x");
  mkdirSync(path.join(tree, "sub"), { recursive: true });
  mkdirSync(sibling);
  writeFileSync(path.join(sibling, "secret"), "not the baseline's");
  writeFileSync(path.join(tree, "sub/f"), "inside");
  // A link whose real path is in the sibling: every earlier check passes (relative, no `..` in
  // the asked path, the file exists and is regular), only the confinement check refuses it.
  symlinkSync("../tree-x/secret", path.join(tree, "to-sibling"));
  symlinkSync(path.join(sibling, "secret"), path.join(tree, "to-sibling-abs"));
  symlinkSync("sub/f", path.join(tree, "to-inside"));

  it("reads a file inside, also through a link that stays inside", async () => {
    expect(Buffer.from((await readConfinedFile(tree, "sub/f", 100)) ?? []).toString()).toBe(
      "inside",
    );
    expect(Buffer.from((await readConfinedFile(tree, "to-inside", 100)) ?? []).toString()).toBe(
      "inside",
    );
  });

  it("never reads the sibling tree-x/ through a link, relative or absolute", async () => {
    expect(await readConfinedFile(tree, "to-sibling", 100)).toBeUndefined();
    expect(await readConfinedFile(tree, "to-sibling-abs", 100)).toBeUndefined();
  });

  const text = async (rel: string, max = 100, root = tree) => {
    const b = await readConfinedFile(root, rel, max);
    return b === undefined ? undefined : Buffer.from(b).toString();
  };

  it("refuses an absolute path and a `..` segment even where the file they name is inside", async () => {
    // Each names the file sub/f inside the tree: only the form of the asked path refuses it.
    expect(await text("/sub/f")).toBeUndefined();
    expect(await text("sub/../sub/f")).toBeUndefined();
    expect(await text("../tree/sub/f")).toBeUndefined();
    // A name that merely starts with two dots is a name, not a climb.
    writeFileSync(path.join(tree, "..dots"), "a name");
    expect(await text("..dots")).toBe("a name");
    // The empty path is the root itself, never read.
    expect(await text("")).toBeUndefined();
  });

  it("a root or a file that is not there is nothing to read", async () => {
    expect(await text("sub/missing")).toBeUndefined();
    expect(await text("sub/f", 100, path.join(work, "no-such-tree"))).toBeUndefined();
  });

  it("a file of exactly maxBytes is read; one byte more is refused", async () => {
    expect(await text("sub/f", 6)).toBe("inside");
    expect(await text("sub/f", 5)).toBeUndefined();
  });

  it("never reads a folder or waits on a FIFO", async () => {
    expect(await text("sub")).toBeUndefined();
    execFileSync("mkfifo", [path.join(tree, "fifo")]);
    // Opened without blocking and refused as not a regular file (a blocking open would hang).
    expect(await text("fifo")).toBeUndefined();
  });

  it("a socket, which cannot be opened, is nothing to read (never an error)", async () => {
    const sock = net.createServer().listen(path.join(tree, "sock"));
    await new Promise<void>((r) => sock.once("listening", () => r()));
    try {
      expect(await text("sock")).toBeUndefined();
    } finally {
      sock.close();
    }
  });

  it("closes every file it opens", async () => {
    const fds = () => readdirSync("/proc/self/fd").length;
    const before = fds();
    for (let i = 0; i < 40; i += 1)
      await readConfinedFile(tree, i % 2 === 0 ? "sub/f" : "sub", 100);
    expect(fds() - before).toBeLessThan(20);
  });
});

describe("the disk watchdog", () => {
  const dir = path.join(work, "layer");
  mkdirSync(dir);
  writeFileSync(path.join(dir, "a"), Buffer.alloc(20_000, 1));
  const limit = 4096;

  /** Watch until `passes` passes have measured; whether it breached. */
  const watch = (initial: number, passes = 3) =>
    new Promise<boolean>((done) => {
      let seen = 0;
      let stop: () => void = () => undefined;
      stop = watchDisk(
        dir,
        initial,
        limit,
        () => {
          stop();
          done(true);
        },
        5,
        (used) => {
          if (used !== undefined) seen += 1;
          if (seen >= passes) {
            stop();
            done(false);
          }
        },
      );
    });

  it("growth of exactly the limit is within it; one byte more is a breach", async () => {
    const used = await diskUse(dir);
    expect(used).toBeGreaterThan(0);
    expect(await watch(used - limit)).toBe(false);
    expect(await watch(used - limit - 1)).toBe(true);
  });

  it("measures allocated blocks: a sparse file counts what it holds", async () => {
    const before = await diskUse(dir);
    const sparse = path.join(dir, "sparse");
    writeFileSync(sparse, "");
    const { truncateSync } = await import("node:fs");
    truncateSync(sparse, 1 << 30);
    expect((await diskUse(dir)) - before).toBeLessThan(1 << 20);
    rmSync(sparse);
  });

  it("counts what folders hold, at any depth, and closes what it opens", async () => {
    const nested = path.join(work, "nested");
    mkdirSync(path.join(nested, "sub/deeper"), { recursive: true });
    writeFileSync(path.join(nested, "sub/deeper/f"), Buffer.alloc(65_536, 1));
    expect(await diskUse(nested)).toBeGreaterThanOrEqual(65_536);
    const fds = () => readdirSync("/proc/self/fd").length;
    const before = fds();
    for (let i = 0; i < 30; i += 1) await diskUse(nested);
    expect(fds() - before).toBeLessThan(10);
  });

  it("without an onPass listener it breaches all the same", async () => {
    await new Promise<void>((done) => {
      watchDisk(dir, 0, 0, done, 5);
    });
  });

  it("a tree it cannot measure is measured again, never a breach", async () => {
    const gone = path.join(work, "never-there");
    let breached = false;
    const measured = await new Promise<(number | undefined)[]>((done) => {
      const seen: (number | undefined)[] = [];
      const stop = watchDisk(
        gone,
        0,
        -1,
        () => {
          breached = true;
        },
        5,
        (used) => {
          seen.push(used);
          if (seen.length === 3) {
            stop();
            done(seen);
          }
        },
      );
    });
    expect(measured).toEqual([undefined, undefined, undefined]);
    expect(breached).toBe(false);
  });

  it("stopped during a pass: no later pass reports or breaches", async () => {
    let passes = 0;
    let breached = false;
    let stop: () => void = () => undefined;
    stop = watchDisk(
      dir,
      0,
      1e15,
      () => {
        breached = true;
      },
      5,
      () => {
        passes += 1;
        stop();
      },
    );
    await new Promise<void>((r) => {
      const wait = () => (passes > 0 ? setTimeout(r, 150) : setTimeout(wait, 5));
      wait();
    });
    expect(passes).toBe(1);
    expect(breached).toBe(false);
  });

  it("a watch stopped before its first pass never breaches", async () => {
    let breached = false;
    const stop = watchDisk(
      dir,
      0,
      0,
      () => {
        breached = true;
      },
      5,
    );
    stop();
    await new Promise((r) => setTimeout(r, 50));
    expect(breached).toBe(false);
  });
});
