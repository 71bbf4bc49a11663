// Copy-on-write environments on every backend: the baseline pinned once and never written, what a
// command changes read from the upper layer alone (deletions, opaque directories, bytes restored),
// the host's writes and removals landing with overlay semantics, change detection that hashes
// nothing of an untouched tree, and the copy fallback.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createBwrapSandbox } from "../../src/adapters/sandbox/bwrap-sandbox.js";
import { probeSandbox } from "../../src/adapters/sandbox/detect-sandbox.js";
import type { BackendOptions } from "../../src/adapters/sandbox/managed-environment.js";
import { createUnshareSandbox } from "../../src/adapters/sandbox/unshare-sandbox.js";
import type { Environment, ExecOptions, Sandbox } from "../../src/core/ports/sandbox.js";
import { digestOfBytes } from "../../src/core/records/canonical.js";
import { compileGlob } from "../../src/core/taskpack/glob.js";
import { changedUnder, changesAsDiff } from "../../src/core/taskpack/snapshot-diff.js";
import { runEnvironments } from "../../src/runtime/run-environments.js";

const LIMITS: ExecOptions = { timeoutMs: 30_000, maxOutputBytes: 1 << 16 };
const text = (s: string) => new TextEncoder().encode(s);
const work = mkdtempSync(path.join(tmpdir(), "warrant-layers-"));
// Contained commands may run as another uid: it must reach the environments' directory.
chmodSync(work, 0o711);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function baselineDir(name: string, files: Record<string, string>): string {
  const dir = path.join(work, name);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

const BASE = {
  "src/a.js": "export const a = 1;\n",
  "src/b.js": "export const b = 2;\n",
  "test/a.test.js": "// test\n",
  "test/fixtures/f.txt": "fixture\n",
};

function make(
  backend: "bwrap" | "unshare",
  options: BackendOptions & { tempRoot: string },
): Sandbox {
  return backend === "bwrap" ? createBwrapSandbox(options) : createUnshareSandbox(options);
}

function freshRoot(): string {
  const d = mkdtempSync(path.join(work, "envs-"));
  chmodSync(d, 0o711);
  return d;
}

async function sh(env: Environment, script: string): Promise<string> {
  const r = await env.exec(["sh", "-c", script], LIMITS);
  expect(r.exitCode, `${script}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

let firstWorking: "bwrap" | "unshare" | undefined;
const pins = (root: string) => readdirSync(root).filter((n) => n.startsWith("warrant-base-"));

for (const backend of ["bwrap", "unshare"] as const) {
  const probeRoot = freshRoot();
  const probe = make(backend, { tempRoot: probeRoot, layers: "overlay" });
  const why = await probeSandbox(probe);
  if (why === undefined) firstWorking ??= backend;
  describe.skipIf(why !== undefined)(
    `copy-on-write environments: ${backend}${why === undefined ? "" : ` (skipped: ${why})`}`,
    () => {
      it("runs over the pinned baseline in overlay mode; a write to a lower file never reaches it", async () => {
        const root = freshRoot();
        const sandbox = make(backend, { tempRoot: root });
        expect(await sandbox.environmentMode()).toBe("overlay");
        const source = baselineDir(`${backend}-write`, BASE);
        const env = await sandbox.createEnvironment(source);
        try {
          expect(env.mode).toBe("overlay");
          await sh(env, "echo more >> src/a.js && chmod 600 src/b.js && echo new > src/c.js");
          expect(await sh(env, "cat src/a.js")).toBe("export const a = 1;\nmore\n");
          const [pin] = pins(root);
          const pinned = path.join(root, pin as string, "tree");
          for (const dir of [source, pinned]) {
            expect(readFileSync(path.join(dir, "src/a.js"), "utf8")).toBe(BASE["src/a.js"]);
            expect(statSync(path.join(dir, "src/b.js")).mode & 0o777).toBe(0o644);
            expect(existsSync(path.join(dir, "src/c.js"))).toBe(false);
          }
          // The host's view of the workspace path is an empty mountpoint: nothing was mounted there.
          expect(readdirSync(env.root)).toEqual([]);
          const c = await env.changes();
          // A mode change alone is no change: digests are of content.
          expect(c.modified.map((m) => m.path)).toEqual(["src/a.js"]);
          expect(c.added).toEqual([{ path: "src/c.js", digest: digestOfBytes(text("new\n")) }]);
        } finally {
          await env.destroy();
        }
        // The pin went with the environment that held it.
        expect(readdirSync(root)).toEqual([]);
      });

      it("a baseline one drive holds is the copy every drive's environments use until that drive closes", async () => {
        const root = freshRoot();
        const sandbox = make(backend, { tempRoot: root });
        const source = baselineDir(`${backend}-held`, BASE);
        const holder = runEnvironments(sandbox);
        await holder.hold?.(source, []);
        const held = pins(root);
        expect(held).toHaveLength(1);
        // Pinned when held: an edit of the folder afterwards is not what the environments see.
        writeFileSync(path.join(source, "src/a.js"), "edited\n");
        for (const n of [1, 2]) {
          const drive = runEnvironments(sandbox);
          const env = await drive.create(source, `held-${backend}-${n}`);
          try {
            expect(pins(root)).toEqual(held);
            const r = await env.exec(["cat", "src/a.js"], LIMITS);
            expect(r.stdout).toBe(BASE["src/a.js"]);
          } finally {
            expect((await env.destroy()).confirmed).toBe(true);
            await drive.close?.();
          }
          expect(pins(root)).toEqual(held);
        }
        await holder.close?.();
        expect(pins(root)).toEqual([]);
        // Held no more: the next environment pins the folder as it is now.
        const drive = runEnvironments(sandbox);
        const env = await drive.create(source, `held-${backend}-3`);
        try {
          expect((await env.exec(["cat", "src/a.js"], LIMITS)).stdout).toBe("edited\n");
        } finally {
          await env.destroy();
          await drive.close?.();
        }
        expect(readdirSync(root)).toEqual([]);
      });

      it("a deletion is a deletion, a directory made again hides what it held, restored bytes are no change", async () => {
        const sandbox = make(backend, { tempRoot: freshRoot() });
        const env = await sandbox.createEnvironment(baselineDir(`${backend}-delete`, BASE));
        try {
          await sh(env, "rm src/a.js && rm -r test/fixtures");
          // src/b.js changed and changed back: the same bytes as the baseline's.
          await sh(env, "cp src/b.js /tmp/b && echo x > src/b.js && cp /tmp/b src/b.js");
          let c = await env.changes();
          expect(c.deleted).toEqual([
            { path: "src/a.js", digest: digestOfBytes(text(BASE["src/a.js"])) },
            {
              path: "test/fixtures/f.txt",
              digest: digestOfBytes(text(BASE["test/fixtures/f.txt"])),
            },
          ]);
          expect([...c.added, ...c.modified]).toEqual([]);
          expect((await env.readFile("src/a.js")).ok ? "read" : "gone").toBe("gone");
          // The directory removed and made again is opaque: nothing of the baseline's shows through.
          await sh(
            env,
            "rm -r test && mkdir test && echo n > test/n.js && cp src/b.js test/a.test.js",
          );
          expect(await sh(env, "ls test")).toBe("a.test.js\nn.js\n");
          const t = await env.readFile("test/a.test.js");
          expect(t.ok && new TextDecoder().decode(t.value)).toBe(BASE["src/b.js"]);
          c = await env.changes();
          expect(c.deleted.map((d) => d.path)).toEqual(["src/a.js", "test/fixtures/f.txt"]);
          expect(c.added.map((d) => d.path)).toEqual(["test/n.js"]);
          expect(c.modified.map((d) => d.path)).toEqual(["test/a.test.js"]);
          const snap = await env.snapshot();
          expect([...snap.keys()].sort()).toEqual(["src/b.js", "test/a.test.js", "test/n.js"]);
        } finally {
          await env.destroy();
        }
      });

      it("the host's writes and removals land in the upper layer as overlayfs would make them", async () => {
        const source = baselineDir(`${backend}-host`, { ...BASE, "bin/run.sh": "#!/bin/sh\n" });
        chmodSync(path.join(source, "bin/run.sh"), 0o755);
        const sandbox = make(backend, { tempRoot: freshRoot() });
        const env = await sandbox.createEnvironment(source);
        try {
          expect(await env.removeFile("src/a.js")).toEqual({
            ok: true,
            value: { path: "src/a.js" },
          });
          expect(await sh(env, "test -e src/a.js && echo there || echo gone")).toBe("gone\n");
          expect((await env.writeFile("bin/run.sh", text("#!/bin/sh\necho hi\n"))).ok).toBe(true);
          expect(await sh(env, "./bin/run.sh")).toBe("hi\n");
          // A directory the command removed, written into by the host: only the new file shows.
          await sh(env, "rm -r test");
          expect((await env.writeFile("test/new.js", text("new\n"))).ok).toBe(true);
          expect(await sh(env, "find test | sort")).toBe("test\ntest/new.js\n");
          const c = await env.changes();
          expect(c.deleted.map((d) => d.path)).toEqual([
            "src/a.js",
            "test/a.test.js",
            "test/fixtures/f.txt",
          ]);
          expect(c.added.map((d) => d.path)).toEqual(["test/new.js"]);
          expect(c.modified.map((d) => d.path)).toEqual(["bin/run.sh"]);
          // A removed file is written again: the whiteout gives way.
          expect((await env.writeFile("src/a.js", text("back\n"))).ok).toBe(true);
          expect(await sh(env, "cat src/a.js")).toBe("back\n");
          expect(readFileSync(path.join(source, "src/a.js"), "utf8")).toBe(BASE["src/a.js"]);
        } finally {
          await env.destroy();
        }
      });

      it("a file the host rewrites within its mtime's second moves to the next second; an older one keeps the write's time", async () => {
        const source = baselineDir(`${backend}-mtime`, { "calc.py": "a - b\n", "old.py": "x\n" });
        // The baseline's calc.py was last written in a second that has not begun yet: any write
        // now lands in or before it, as a patch landing in the second the file was made would.
        const ahead = Math.floor(Date.now() / 1000) + 100;
        utimesSync(path.join(source, "calc.py"), ahead, ahead);
        utimesSync(path.join(source, "old.py"), 1_000_000_000, 1_000_000_000);
        const sandbox = make(backend, { tempRoot: freshRoot() });
        const env = await sandbox.createEnvironment(source);
        try {
          const mtime = async (file: string) => Number(await sh(env, `stat -c %Y ${file}`));
          expect(await mtime("calc.py")).toBe(ahead);
          // Same size, as a one-character fix is: only the mtime can tell a cache it changed.
          expect((await env.writeFile("calc.py", text("a + b\n"))).ok).toBe(true);
          expect(await mtime("calc.py")).toBe(ahead + 1);
          // Written again (now from the upper layer): later again.
          expect((await env.writeFile("calc.py", text("a * b\n"))).ok).toBe(true);
          expect(await mtime("calc.py")).toBe(ahead + 2);
          // A file last written long ago keeps the time of the write.
          const before = Math.floor(Date.now() / 1000);
          expect((await env.writeFile("old.py", text("y\n"))).ok).toBe(true);
          const written = await mtime("old.py");
          expect(written).toBeGreaterThanOrEqual(before);
          expect(written).toBeLessThan(ahead);
          expect(await sh(env, "cat calc.py old.py")).toBe("a * b\ny\n");
        } finally {
          await env.destroy();
        }
      });

      it("a baseline is pinned once: shared while held, blind to later workspace edits, gone when released", async () => {
        const root = freshRoot();
        const sandbox = make(backend, { tempRoot: root });
        const source = baselineDir(`${backend}-pin`, BASE);
        const first = await sandbox.openBaseline(source);
        const second = await sandbox.openBaseline(source);
        expect(pins(root)).toHaveLength(1);
        writeFileSync(path.join(source, "src/a.js"), "edited after the loop opened\n");
        const env = await sandbox.createEnvironment(second);
        expect(await sh(env, "cat src/a.js")).toBe(BASE["src/a.js"]);
        await first.release();
        // A handle given back is refused even while another holds the same pin.
        await expect(sandbox.createEnvironment(first)).rejects.toMatchObject({
          code: "sandbox/baseline-released",
        });
        await second.release();
        // The environment still holds the pin.
        expect(pins(root)).toHaveLength(1);
        await env.destroy();
        expect(pins(root)).toEqual([]);
        await expect(sandbox.createEnvironment(first)).rejects.toMatchObject({
          code: "sandbox/baseline-released",
        });
        const again = await sandbox.openBaseline(source);
        const env2 = await sandbox.createEnvironment(again);
        expect(await sh(env2, "cat src/a.js")).toBe("edited after the loop opened\n");
        await env2.destroy();
        await again.release();
        expect(readdirSync(root)).toEqual([]);
      });

      it("where overlay is refused, environments are copies that share no inode with the baseline", async () => {
        // A temp root whose path the overlay's mount options cannot carry: the probe fails.
        const odd = path.join(work, `${backend}-odd,root`);
        mkdirSync(odd);
        chmodSync(odd, 0o711);
        await expect(
          make(backend, { tempRoot: odd, layers: "overlay" }).environmentMode(),
        ).rejects.toMatchObject({ code: "sandbox/overlay-unavailable" });
        const sandbox = make(backend, { tempRoot: odd });
        expect(await sandbox.environmentMode()).toBe("copy");
        const source = baselineDir(`${backend}-copy`, BASE);
        const env = await sandbox.createEnvironment(source);
        try {
          expect(env.mode).toBe("copy");
          const [pin] = pins(odd);
          for (const rel of Object.keys(BASE)) {
            const mine = lstatSync(path.join(env.root, rel));
            expect(mine.nlink, rel).toBe(1);
            expect(mine.ino).not.toBe(lstatSync(path.join(source, rel)).ino);
            expect(mine.ino).not.toBe(lstatSync(path.join(odd, pin as string, "tree", rel)).ino);
          }
          await sh(env, "echo x >> src/a.js && rm test/a.test.js");
          const c = await env.changes();
          expect(c.modified.map((m) => m.path)).toEqual(["src/a.js"]);
          expect(c.deleted.map((m) => m.path)).toEqual(["test/a.test.js"]);
          expect(readFileSync(path.join(source, "src/a.js"), "utf8")).toBe(BASE["src/a.js"]);
        } finally {
          await env.destroy();
        }
      });
    },
  );
}

let wide: string | undefined;
/** 20 000 small files in 100 folders, made once. */
function wideBaseline(): string {
  if (wide === undefined) {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20_000; i++) files[`pkg/m${i % 100}/f${i}.js`] = `// ${i}\n`;
    wide = baselineDir("wide", files);
  }
  return wide;
}

describe("change detection cost", () => {
  for (const layers of ["overlay", "copy"] as const) {
    // Host-side code, the same on every backend: run on the first that works.
    it.skipIf(firstWorking === undefined)(
      `an unchanged check on an untouched 20 000-file tree hashes none of its files (${layers})`,
      async () => {
        const source = wideBaseline();
        const hashed: string[] = [];
        const sandbox = make(firstWorking as "bwrap" | "unshare", {
          tempRoot: freshRoot(),
          layers,
          hooks: { onHash: (layer, p) => hashed.push(`${layer}:${p}`) },
        });
        const baseline = await sandbox.openBaseline(source);
        expect([baseline.files, baseline.bytes]).toEqual([20_000, expect.any(Number)]);
        const env = await sandbox.createEnvironment(baseline);
        try {
          await sh(env, "true");
          const c = await env.changes();
          expect([c.added, c.modified, c.deleted, c.complete]).toEqual([[], [], [], true]);
          const pkg = compileGlob("pkg/**");
          if (!pkg.ok) throw new Error("glob");
          expect(changedUnder(changesAsDiff(c), [pkg.value])).toEqual([]);
          expect(hashed).toEqual([]);
          // Five changed files: five hashed here, and at most their five baseline files.
          await sh(env, "for i in 1 2 3 4 5; do echo x >> pkg/m$i/f$i.js; done");
          const five = await env.changes();
          expect(five.modified.map((m) => m.path)).toEqual(
            [1, 2, 3, 4, 5].map((i) => `pkg/m${i}/f${i}.js`),
          );
          expect(hashed.filter((h) => h.startsWith("environment:"))).toHaveLength(5);
          expect(hashed.length).toBeLessThanOrEqual(10);
        } finally {
          await env.destroy();
          await baseline.release();
        }
      },
      // The copy mode copies all 20 000 files first (seconds on an idle disk, a minute on a loaded
      // one): a bound on a hung test, not a claim about speed.
      300_000,
    );
  }
});

describe("pins left by dead processes", () => {
  it.skipIf(firstWorking === undefined)(
    "are removed before a sandbox pins its first baseline; live, foreign and unknown ones stay",
    async () => {
      const root = freshRoot();
      const me = {
        boot: readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim(),
        pidns: readlinkSync("/proc/self/ns/pid"),
      };
      const exited = spawnSync("true");
      const deadPid = exited.pid as number;
      const stat = readFileSync(`/proc/${process.pid}/stat`, "latin1");
      const myStart = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
      const leave = (name: string, owner: object | undefined) => {
        const base = path.join(root, `warrant-base-${name}`);
        mkdirSync(path.join(base, "tree/locked"), { recursive: true });
        writeFileSync(path.join(base, "tree/locked/f"), "x");
        chmodSync(path.join(base, "tree/locked"), 0);
        if (owner !== undefined)
          writeFileSync(path.join(base, "owner.json"), JSON.stringify(owner));
      };
      leave("dead", { ...me, pid: deadPid, start: "1" });
      leave("reused", { ...me, pid: process.pid, start: "1" });
      leave("reboot", { ...me, boot: "another-boot", pid: process.pid, start: myStart });
      leave("live", { ...me, pid: process.pid, start: myStart });
      leave("foreign", { ...me, pidns: "pid:[1]", pid: deadPid, start: "1" });
      leave("unknown", undefined);
      const sandbox = make(firstWorking as "bwrap" | "unshare", { tempRoot: root });
      const pin = await sandbox.openBaseline(baselineDir("sweep", BASE));
      const left = pins(root).filter((n) => !/^warrant-base-[A-Za-z0-9]{6}$/.test(n));
      expect(left.sort()).toEqual([
        "warrant-base-foreign",
        "warrant-base-live",
        "warrant-base-unknown",
      ]);
      await pin.release();
      for (const n of left) chmodSync(path.join(root, n, "tree/locked"), 0o700);
    },
  );
});
