// The host's Ed25519 signing key: 32 random bytes in `host.key` beside the ledger (the SQLite
// file's folder; `.warrant/` for other stores), created on first use with mode 0600. It signs
// proposals and execution records; it never enters the ledger, a log or an error. Every worker of
// one store must use the same key (the same `.warrant/host.key`, copied to each machine).
import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { WarrantError } from "../../core/result.js";

export const HOST_KEY_FILE = "host.key";
const KEY_BYTES = 32;

/** The folder that keeps the host key of a store URI. */
export function hostKeyDir(storeUri: string, cwd: string = process.cwd()): string {
  if (storeUri.startsWith("sqlite:"))
    return path.dirname(path.resolve(cwd, storeUri.slice("sqlite:".length)));
  return path.resolve(cwd, ".warrant");
}

export async function loadOrCreateHostKey(dir: string): Promise<Uint8Array> {
  const file = path.join(dir, HOST_KEY_FILE);
  const existing = await readFile(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return undefined;
    throw new WarrantError("runtime/host-key", `cannot read the host key in ${dir}`);
  });
  if (existing !== undefined) {
    if (existing.length !== KEY_BYTES) {
      throw new WarrantError("runtime/host-key", `${file} is not a ${KEY_BYTES}-byte key`);
    }
    return new Uint8Array(existing);
  }
  await mkdir(dir, { recursive: true });
  const key = randomBytes(KEY_BYTES);
  // Written whole under a name of its own, then linked into place: a process that reads the key
  // never sees it half-written, and of several processes creating it at once the first link wins
  // (the others read that one).
  const temp = path.join(dir, `.${HOST_KEY_FILE}.${process.pid}.${randomBytes(4).toString("hex")}`);
  try {
    await writeFile(temp, key, { mode: 0o600, flag: "wx" });
    await link(temp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return loadOrCreateHostKey(dir);
    throw new WarrantError("runtime/host-key", `cannot create the host key in ${dir}`);
  } finally {
    await rm(temp, { force: true });
  }
  return new Uint8Array(key);
}
