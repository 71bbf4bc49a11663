// The host's Ed25519 signing keys on disk: 32 random bytes per key, kept outside every store's
// folder in this host's key folder ($WARRANT_KEY_DIR, else $XDG_CONFIG_HOME/warrant/keys, else
// ~/.config/warrant/keys; made mode 0700), one file per key named by its public key
// (`host-<public key>.key`, mode 0600), written whole under a name of its own and then linked into
// place, so a reader never sees half a key and of several writers the first link wins. A key never
// enters the ledger, a log or an error. `host.key` beside a store is where keys were kept before:
// read only to carry such a key over.
import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { WarrantError } from "../../core/result.js";

/** The legacy key file beside a store, and the key of a store that cannot record its own. */
export const HOST_KEY_FILE = "host.key";
/** Trusted public keys, one a line, beside the key folder. */
export const TRUSTED_KEYS_FILE = "trusted-keys";
const KEY_BYTES = 32;

type Env = Readonly<Record<string, string | undefined>>;

/** Warrant's configuration folder: $XDG_CONFIG_HOME/warrant (an absolute path), else ~/.config/warrant. */
export function configDir(env: Env = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(homedir(), ".config");
  return path.join(base, "warrant");
}

/** The folder of this host's private keys: $WARRANT_KEY_DIR, else `keys/` in the config folder. */
export function keyDir(env: Env = process.env): string {
  const given = env.WARRANT_KEY_DIR;
  if (given !== undefined && given !== "") return path.resolve(given);
  return path.join(configDir(env), "keys");
}

/** The default trusted-keys file: `trusted-keys` in the config folder. */
export function trustedKeysFile(env: Env = process.env): string {
  return path.join(configDir(env), TRUSTED_KEYS_FILE);
}

/** The file of the key whose public key is `publicKey` (43 base64url characters). */
export function keyFileOf(dir: string, publicKey: string): string {
  if (!/^[A-Za-z0-9_-]{43}$/.test(publicKey))
    throw new WarrantError("runtime/host-key", `${JSON.stringify(publicKey)} is not a public key`);
  return path.join(dir, `host-${publicKey}.key`);
}

/** Where a store kept its key before keys left the store's folder: its SQLite folder, else `.warrant/`. */
export function legacyKeyDir(storeUri: string, cwd: string = process.cwd()): string {
  if (storeUri.startsWith("sqlite:"))
    return path.dirname(path.resolve(cwd, storeUri.slice("sqlite:".length)));
  return path.resolve(cwd, ".warrant");
}

/** The same as `legacyKeyDir`: the folder a store's `host.key` lay in before keys left it. */
export const hostKeyDir = legacyKeyDir;

/** The 32-byte key in `file`; undefined when there is none; `runtime/host-key` when damaged. */
export async function readKeyFile(file: string): Promise<Uint8Array | undefined> {
  const bytes = await readFile(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return undefined;
    throw new WarrantError("runtime/host-key", `cannot read the host key ${file}`);
  });
  if (bytes === undefined) return undefined;
  if (bytes.length !== KEY_BYTES)
    throw new WarrantError("runtime/host-key", `${file} is not a ${KEY_BYTES}-byte key`);
  return new Uint8Array(bytes);
}

/**
 * Writes `key` to `file` (mode 0600; its folder made mode 0700) unless the file exists: true when
 * this call wrote it. Written whole, then linked into place.
 */
export async function writeKeyFile(file: string, key: Uint8Array): Promise<boolean> {
  const dir = path.dirname(file);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch {
    throw new WarrantError("runtime/host-key", `cannot create the key folder ${dir}`);
  }
  const temp = path.join(
    dir,
    `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}`,
  );
  try {
    await writeFile(temp, key, { mode: 0o600, flag: "wx" });
    await chmod(temp, 0o600);
    await link(temp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new WarrantError("runtime/host-key", `cannot write the host key in ${dir}`);
  } finally {
    await rm(temp, { force: true });
  }
}

/** A fresh key. */
export function newKey(): Uint8Array {
  return new Uint8Array(randomBytes(KEY_BYTES));
}

/** The key `host.key` in `dir`, created (mode 0600) on first use; the same for every process. */
export async function loadOrCreateHostKey(dir: string): Promise<Uint8Array> {
  const file = path.join(dir, HOST_KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing !== undefined) return existing;
  const key = newKey();
  if (await writeKeyFile(file, key)) return key;
  return (await readKeyFile(file)) ?? key;
}
