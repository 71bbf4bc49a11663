// Host-side file access for trees a sandboxed command may have shaped (host-fs.ts): every lookup
// relative to an open directory and never through a link, every open checked for what it opened,
// reads and hashes bounded, names kept as bytes and written one text per name. Each rule is tried on
// an input that passes the others: a link where a folder or a file is expected, a FIFO that would
// block, a socket that cannot be opened, a read exactly at its cap and one byte past it.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  at,
  CHUNK_BYTES,
  chmodDirAt,
  closeQuietly,
  displayPath,
  type EntryKind,
  escapeName,
  hashBytes,
  hashFd,
  isSpecial,
  isUtf8,
  kindOf,
  listDir,
  lstatAt,
  nameKey,
  openDirAt,
  openDirPath,
  openRegularAt,
  pathHandleAt,
  readCapped,
  readlinkAt,
  yielder,
} from "../../src/adapters/sandbox/host-fs.js";
import { digestOfBytes } from "../../src/core/records/canonical.js";

const work = mkdtempSync(path.join(tmpdir(), "warrant-hostfs-"));
const held: number[] = [];
afterAll(() => {
  for (const fd of held) closeQuietly(fd);
  rmSync(work, { recursive: true, force: true });
});
const B = (s: string) => Buffer.from(s);

// The tree: a file, a folder, links to both, a FIFO, a socket, and (where this host lets us make
// device nodes) an overlay whiteout and a block device.
const tree = path.join(work, "tree");
mkdirSync(path.join(tree, "sub"), { recursive: true });
writeFileSync(path.join(tree, "file"), "0123456789");
writeFileSync(path.join(tree, "empty"), "");
writeFileSync(path.join(tree, "sub/inner"), "inner");
symlinkSync("sub", path.join(tree, "link-dir"));
symlinkSync("file", path.join(tree, "link-file"));
execFileSync("mkfifo", [path.join(tree, "fifo")]);
const sock = net.createServer().listen(path.join(tree, "sock"));
afterAll(() => sock.close());
const node = (name: string, type: "c" | "b", major: string, minor: string) => {
  try {
    execFileSync("mknod", [path.join(tree, name), type, major, minor], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};
const devices = node("whiteout", "c", "0", "0") && node("block", "b", "7", "200");
const treeFd = openDirPath(tree);
held.push(treeFd);

describe("what an entry is", () => {
  const cases: [string, EntryKind, boolean][] = [
    [path.join(tree, "file"), "file", false],
    [path.join(tree, "sub"), "dir", false],
    [path.join(tree, "link-dir"), "symlink", false],
    [path.join(tree, "fifo"), "fifo", true],
    ["/dev/null", "char-device", true],
  ];
  it("file, dir and symlink are not special; a FIFO, a socket and a device are", async () => {
    await new Promise<void>((r) => (sock.listening ? r() : sock.once("listening", () => r())));
    cases.push([path.join(tree, "sock"), "socket", true]);
    for (const [p, kind, special] of cases) {
      expect(kindOf(lstatSync(p, { bigint: true })), p).toBe(kind);
      expect(isSpecial(kind), kind).toBe(special);
    }
    expect(isSpecial("whiteout")).toBe(false);
    expect(isSpecial("block-device")).toBe(true);
  });

  it.skipIf(!devices)(
    "a character device 0/0 is an overlay whiteout; a block device is one",
    () => {
      expect(kindOf(lstatSync(path.join(tree, "whiteout"), { bigint: true }))).toBe("whiteout");
      expect(kindOf(lstatSync(path.join(tree, "block"), { bigint: true }))).toBe("block-device");
    },
  );
});

describe("lookups relative to an open directory", () => {
  it("names a directory by its descriptor, and a name inside it", () => {
    expect(at(7).toString()).toBe("/proc/self/fd/7");
    expect(at(7, B("a b")).toString()).toBe("/proc/self/fd/7/a b");
  });

  it("opens a folder by path or by name, never through a link, never a file", () => {
    const fd = openDirAt(treeFd, B("sub"));
    held.push(fd);
    expect(listDir(fd).map(String)).toEqual(["inner"]);
    expect(() => openDirAt(treeFd, B("link-dir"))).toThrow(/ELOOP|ENOTDIR/);
    expect(() => openDirAt(treeFd, B("file"))).toThrow(/ENOTDIR/);
    expect(() => openDirPath(path.join(tree, "link-dir"))).toThrow(/ELOOP|ENOTDIR/);
    expect(() => openDirPath(path.join(tree, "file"))).toThrow(/ENOTDIR/);
    // A FIFO is refused without waiting for a writer.
    expect(() => openDirAt(treeFd, B("fifo"))).toThrow(/ENOTDIR/);
  });

  it("a path handle names the link itself, not its target", () => {
    const h = pathHandleAt(treeFd, B("link-file"));
    try {
      expect(fstatSync(h).isSymbolicLink()).toBe(true);
    } finally {
      closeSync(h);
    }
  });

  it("lstat: undefined when nothing is there; a link is not followed; other errors thrown", () => {
    expect(lstatAt(treeFd, B("missing"))).toBeUndefined();
    expect(lstatAt(treeFd, B("link-file"))?.isSymbolicLink()).toBe(true);
    const fileFd = openSync(path.join(tree, "file"), "r");
    held.push(fileFd);
    expect(() => lstatAt(fileFd, B("x"))).toThrow(/ENOTDIR/);
  });

  it("lists names as bytes, also names that are not UTF-8; reads a link's own text", () => {
    const dir = path.join(work, "names");
    mkdirSync(dir);
    const odd = Buffer.from([0x61, 0xff, 0x62]);
    writeFileSync(Buffer.concat([B(`${dir}/`), odd]), "");
    const fd = openDirPath(dir);
    held.push(fd);
    expect(listDir(fd)).toEqual([odd]);
    expect(readlinkAt(treeFd, B("link-dir"))).toEqual(B("sub"));
  });

  it("changes a folder's mode through a handle on it; a link to a folder is refused, its target untouched", () => {
    mkdirSync(path.join(tree, "locked"), { mode: 0o700 });
    chmodDirAt(treeFd, B("locked"), 0o750);
    expect(statSync(path.join(tree, "locked")).mode & 0o777).toBe(0o750);
    const before = statSync(path.join(tree, "sub")).mode & 0o777;
    expect(() => chmodDirAt(treeFd, B("link-dir"), 0o700)).toThrow(/ENOTDIR|ELOOP/);
    expect(statSync(path.join(tree, "sub")).mode & 0o777).toBe(before);
    expect(before).not.toBe(0o700);
  });
});

describe("opening a regular file (openRegularAt)", () => {
  const fdCount = () => readdirSync("/proc/self/fd").length;

  it("opens a regular file, with its stat", () => {
    const r = openRegularAt(treeFd, B("file"));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    held.push(r.fd);
    expect(r.st.size).toBe(10n);
    expect(readCapped(r.fd, 100).bytes).toEqual(new Uint8Array(B("0123456789")));
  });

  it("a link is a symlink, never followed; nothing there is gone", () => {
    expect(openRegularAt(treeFd, B("link-file"))).toEqual({ ok: false, kind: "symlink" });
    expect(openRegularAt(treeFd, B("missing"))).toEqual({ ok: false, kind: "gone" });
  });

  it("a FIFO, a folder and a device are opened without blocking, named, and closed again", () => {
    const before = fdCount();
    for (let i = 0; i < 10; i += 1) {
      expect(openRegularAt(treeFd, B("fifo"))).toEqual({ ok: false, kind: "fifo" });
      expect(openRegularAt(treeFd, B("sub"))).toEqual({ ok: false, kind: "dir" });
    }
    const dev = openDirPath("/dev");
    held.push(dev);
    expect(openRegularAt(dev, B("null"))).toEqual({ ok: false, kind: "char-device" });
    expect(fdCount() - before).toBeLessThan(10);
  });

  it("a socket, which cannot be opened, is reported as a device", () => {
    expect(openRegularAt(treeFd, B("sock"))).toEqual({ ok: false, kind: "char-device" });
  });

  it("another error is thrown", () => {
    const fileFd = openSync(path.join(tree, "file"), "r");
    held.push(fileFd);
    expect(() => openRegularAt(fileFd, B("x"))).toThrow(/ENOTDIR/);
  });
});

describe("bounded reads and hashes", () => {
  const big = path.join(work, "big");
  const bigBytes = Buffer.alloc(2 * CHUNK_BYTES + 12345);
  for (let i = 0; i < bigBytes.length; i += 1) bigBytes[i] = (i * 7) % 251;
  writeFileSync(big, bigBytes);
  const fdOf = (p: string) => {
    const fd = openSync(p, "r");
    held.push(fd);
    return fd;
  };

  it("readCapped: exactly the cap is whole; one byte less is cut and flagged", () => {
    const fd = fdOf(path.join(tree, "file"));
    expect(readCapped(fd, 10)).toEqual({
      bytes: new Uint8Array(B("0123456789")),
      truncated: false,
    });
    expect(readCapped(fd, 9)).toEqual({ bytes: new Uint8Array(B("012345678")), truncated: true });
    expect(readCapped(fd, 2.9)).toEqual({ bytes: new Uint8Array(B("01")), truncated: true });
    expect(readCapped(fd, 0)).toEqual({ bytes: new Uint8Array(), truncated: true });
    expect(readCapped(fd, -3)).toEqual({ bytes: new Uint8Array(), truncated: true });
    const empty = fdOf(path.join(tree, "empty"));
    expect(readCapped(empty, 0)).toEqual({ bytes: new Uint8Array(), truncated: false });
  });

  it("readCapped past one chunk: reads in chunks up to the cap", () => {
    const fd = fdOf(big);
    const whole = readCapped(fd, bigBytes.length);
    expect(whole.truncated).toBe(false);
    expect(Buffer.from(whole.bytes).equals(bigBytes)).toBe(true);
    const cut = readCapped(fd, CHUNK_BYTES + 5);
    expect(cut.truncated).toBe(true);
    expect(Buffer.from(cut.bytes).equals(bigBytes.subarray(0, CHUNK_BYTES + 5))).toBe(true);
  });

  it("hashFd is the records' digest of every byte, across chunks; stop gives up after a chunk", async () => {
    const expected = `sha256:${createHash("sha256").update(bigBytes).digest("base64url")}`;
    expect(await hashFd(fdOf(big))).toBe(expected);
    expect(digestOfBytes(new Uint8Array(bigBytes))).toBe(expected);
    expect(hashBytes(new Uint8Array(bigBytes))).toBe(expected);
    let asked = 0;
    const stop = () => {
      asked += 1;
      return asked === 2;
    };
    expect(await hashFd(fdOf(big), stop)).toBeUndefined();
    expect(asked).toBe(2);
    expect(await hashFd(fdOf(big), () => false)).toBe(expected);
    expect(await hashFd(fdOf(path.join(tree, "empty")))).toBe(hashBytes(new Uint8Array()));
  });

  it("yielder gives way to the event loop on every nth call only", async () => {
    const tick = yielder(3);
    const ran: boolean[] = [];
    for (let i = 1; i <= 6; i += 1) {
      let immediate = false;
      setImmediate(() => {
        immediate = true;
      });
      await tick();
      ran.push(immediate);
      await new Promise<void>((r) => setImmediate(r));
    }
    expect(ran).toEqual([false, false, true, false, false, true]);
  });
});

/** The reference: at each byte, the one well-formed UTF-8 sequence starting there, if any. */
function referenceEscape(b: Buffer): string {
  const strict = new TextDecoder("utf-8", { fatal: true });
  let out = "";
  let i = 0;
  outer: while (i < b.length) {
    for (let len = 1; len <= 4 && i + len <= b.length; len += 1) {
      try {
        const s = strict.decode(b.subarray(i, i + len));
        if ([...s].length !== 1) continue;
        out += s === "\\" ? "\\\\" : s;
        i += len;
        continue outer;
      } catch {
        // Not a whole sequence of this length.
      }
    }
    out += `\\x${(b[i] as number).toString(16).padStart(2, "0")}`;
    i += 1;
  }
  return out;
}

describe("names as text", () => {
  it("a UTF-8 name without a backslash is itself", () => {
    for (const s of ["plain", "é", "日本", "😀", ""]) expect(escapeName(B(s))).toBe(s);
    expect(isUtf8(B("é😀"))).toBe(true);
    expect(isUtf8(Buffer.from([0xc3]))).toBe(false);
  });

  it("backslashes are doubled and every byte of a broken sequence is \\xHH", () => {
    expect(escapeName(B("a\\b"))).toBe("a\\\\b");
    expect(escapeName(Buffer.from([0x61, 0xff, 0x5c, 0x78, 0x66, 0x66]))).toBe("a\\xff\\\\xff");
    expect(escapeName(Buffer.from([0x0a, 0xc3]))).toBe("\n\\xc3");
    // Two names that differ never share a text.
    expect(escapeName(B("\\xff"))).not.toBe(escapeName(Buffer.from([0xff])));
  });

  it("every lead byte at each boundary, with continuation bytes at theirs, is read as UTF-8 reads it", () => {
    const leads = [
      0x00, 0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee,
      0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff,
    ];
    // The second byte's boundaries (E0, ED, F0 and F4 narrow it), then any byte's as a continuation.
    const conts = [0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0];
    const later = [0x7f, 0x80, 0xbf, 0xc0];
    // A backslash first makes every name take the escaping path. Compared all at once.
    const wrong: string[] = [];
    const check = (bytes: number[]) => {
      const b = Buffer.from([0x5c, ...bytes]);
      if (escapeName(b) !== referenceEscape(b)) wrong.push(Buffer.from(bytes).toString("hex"));
    };
    for (const a of leads) {
      check([a]);
      for (const c1 of conts) {
        check([a, c1]);
        for (const c2 of later) {
          check([a, c1, c2]);
          if (a >= 0xf0) for (const c3 of later) check([a, c1, c2, c3]);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("a path of names is joined with /; a map key keeps every byte", () => {
    expect(displayPath([B("a"), Buffer.from([0xff]), B("c\\")])).toBe("a/\\xff/c\\\\");
    expect(displayPath([])).toBe("");
    expect(nameKey(Buffer.from([0xc3, 0xa9]))).toBe("\u00c3\u00a9");
    expect(nameKey(Buffer.from([0xff]))).not.toBe(nameKey(Buffer.from([0xfe])));
  });
});

describe("closeQuietly", () => {
  it("closes an open descriptor, and says nothing of one already closed or none", () => {
    const fd = openSync(path.join(tree, "file"), "r");
    closeQuietly(fd);
    expect(() => fstatSync(fd)).toThrow(/EBADF/);
    expect(() => closeQuietly(fd)).not.toThrow();
    expect(() => closeQuietly(undefined)).not.toThrow();
  });
});
