// Which upper-layer directories overlayfs marked opaque (`user.overlay.opaque=y`: the lower
// layer's entries under them are hidden). Node has no getxattr, so GNU tar — Essential on Debian,
// present on every host with util-linux — reads the attribute: the directories are handed to it as
// inherited file descriptors and archived without their contents (`--no-recursion`), and the
// pax headers of that archive say which carry the attribute.
import { spawn } from "node:child_process";
import { WarrantError } from "../../core/result.js";
import { SANDBOX_PATH } from "./contained-exec.js";
import { fstatBig } from "./host-fs.js";

const BATCH = 200;
const FIRST_FD = 3;
const OPAQUE = "SCHILY.xattr.user.overlay.opaque=y";

/** For each directory open as `fds[i]` (any kind of fd, O_PATH included): is it opaque? */
export async function opaqueDirs(fds: readonly number[], tarPath = "tar"): Promise<boolean[]> {
  const out: boolean[] = [];
  for (let i = 0; i < fds.length; i += BATCH) {
    out.push(...(await batch(fds.slice(i, i + BATCH), tarPath)));
  }
  return out;
}

/**
 * Opaque answers kept for one environment's upper layer, by directory identity and ctime: setting
 * the attribute changes a directory's ctime (and overlayfs makes a directory opaque as a new one),
 * so an answer is reused only for the directory as it was when asked. Shared by the environment's
 * host view and its change detection, so that a run's changes and the reads that follow them ask
 * tar once.
 */
export class OpaqueMemo {
  readonly #seen = new Map<string, boolean>();
  readonly #tarPath: string;

  constructor(tarPath = "tar") {
    this.#tarPath = tarPath;
  }

  /** For each directory open as `fds[i]`: is it opaque? Only the ones not known as they are now are read. */
  async opaque(fds: readonly number[]): Promise<boolean[]> {
    const keys = fds.map((fd) => {
      const st = fstatBig(fd);
      return `${st.dev}:${st.ino}:${st.ctimeNs}`;
    });
    const unknown: number[] = [];
    keys.forEach((k, i) => {
      if (!this.#seen.has(k) && !unknown.some((j) => keys[j] === k)) unknown.push(i);
    });
    if (unknown.length > 0) {
      const answers = await opaqueDirs(
        unknown.map((i) => fds[i] as number),
        this.#tarPath,
      );
      for (const [j, i] of unknown.entries())
        this.#seen.set(keys[i] as string, answers[j] === true);
    }
    return keys.map((k) => this.#seen.get(k) === true);
  }
}

function batch(fds: readonly number[], tarPath: string): Promise<boolean[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      tarPath,
      [
        "--xattrs",
        "--xattrs-include=user.overlay.opaque",
        "--no-recursion",
        "--null",
        "--absolute-names",
        "--files-from=-",
        "--create",
        "--file=-",
      ],
      { stdio: ["pipe", "pipe", "pipe", ...fds], env: { PATH: SANDBOX_PATH, LC_ALL: "C" } },
    );
    const chunks: Buffer[] = [];
    let err = "";
    child.stdout?.on("data", (d: Buffer) => chunks.push(d));
    child.stderr?.setEncoding("utf8").on("data", (d: string) => {
      err += d;
    });
    child.on("error", (e) =>
      reject(new WarrantError("sandbox/xattr-unreadable", `tar: ${e.message}`)),
    );
    child.on("close", (code) => {
      if (code !== 0) {
        reject(
          new WarrantError(
            "sandbox/xattr-unreadable",
            `tar exited ${String(code)}: ${err.trim().slice(0, 300)}`,
          ),
        );
        return;
      }
      const opaque = opaqueSlots(Buffer.concat(chunks));
      resolve(fds.map((_, i) => opaque.has(FIRST_FD + i)));
    });
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(fds.map((_, i) => `/proc/self/fd/${FIRST_FD + i}/.\0`).join(""));
  });
}

/** The fd numbers of the archive's entries whose pax header carries the opaque attribute. */
export function opaqueSlots(archive: Buffer): Set<number> {
  const found = new Set<number>();
  let pending = false;
  let offset = 0;
  while (offset + 512 <= archive.length) {
    const header = archive.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const size = Number.parseInt(field(header, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(header[156] ?? 0);
    const body = archive.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") {
      pending = body
        .toString("latin1")
        .split("\n")
        .some((r) => r.endsWith(` ${OPAQUE}`));
      continue;
    }
    const prefix = field(header, 345, 155);
    const name = `${prefix === "" ? "" : `${prefix}/`}${field(header, 0, 100)}`;
    const m = /^\/proc\/self\/fd\/(\d+)\//.exec(name);
    if (pending && m !== null) found.add(Number(m[1]));
    pending = false;
  }
  return found;
}

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? raw.length : end).toString("latin1");
}
