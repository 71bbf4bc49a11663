// Which host key signs a store's loops. The store records the public key of its host key (the first
// writer records it; every later one signs with the same key); the private key lives in this host's
// key folder, outside every store's folder, named by its public key. A store that records none yet
// gets a new key, or the key a store of an older Warrant kept beside itself (`host.key`), which is
// copied into the key folder; a copy left beside the store is warned about on every use, since
// whoever can read that folder can sign as this host, and is never taken up again. A `memory:`
// store lives in one process: its key too.
import { rm } from "node:fs/promises";
import path from "node:path";
import {
  HOST_KEY_FILE,
  keyDir,
  keyFileOf,
  legacyKeyDir,
  loadOrCreateHostKey,
  newKey,
  readKeyFile,
  writeKeyFile,
} from "../adapters/fs/host-key.js";
import type { LedgerStore } from "../core/ports/ledger-store.js";
import { base64url } from "../core/records/canonical.js";
import { publicKeyOf } from "../core/records/signature.js";
import { WarrantError } from "../core/result.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface StoreKeyOptions {
  /** Base of a relative SQLite path (where a legacy `host.key` lies). Default: the working directory. */
  readonly cwd?: string;
  readonly env?: Env;
  /** Make a key when the store records none (default true); false: only a key already there. */
  readonly create?: boolean;
  /** Told what a person should know (a legacy key copied, or left beside the store). */
  readonly onNotice?: (message: string) => void;
}

export interface StoreKey {
  readonly secret: Uint8Array;
  /** Unpadded base64url. */
  readonly publicKey: string;
  /** The key's file; absent for a `memory:` store's key, which is never written. */
  readonly file?: string;
}

const ephemeral = new WeakMap<LedgerStore, StoreKey>();

const publicOf = async (secret: Uint8Array) => base64url(await publicKeyOf(secret));

/** A legacy key beside the store, if one is there and readable. */
async function legacyKey(
  file: string,
  notice: (m: string) => void,
): Promise<{ secret: Uint8Array; publicKey: string } | undefined> {
  try {
    const secret = await readKeyFile(file);
    return secret === undefined ? undefined : { secret, publicKey: await publicOf(secret) };
  } catch (e) {
    notice(`${file} is not a host key and is ignored (${(e as Error).message})`);
    return undefined;
  }
}

/**
 * The host key of `store` (see the header). Throws `runtime/host-key-missing` when the store
 * records a key this host does not hold, `runtime/host-key` when a key file is damaged or holds
 * another key than its name says.
 */
export async function storeHostKey(
  store: LedgerStore,
  o: StoreKeyOptions = {},
): Promise<StoreKey | undefined> {
  const env = o.env ?? process.env;
  const create = o.create ?? true;
  const notice = o.onNotice ?? ((m: string) => process.stderr.write(`warrant: ${m}\n`));
  if (store.uri.startsWith("memory:")) {
    const known = ephemeral.get(store);
    if (known !== undefined || !create) return known;
    const secret = newKey();
    const made = { secret, publicKey: await publicOf(secret) };
    ephemeral.set(store, made);
    return made;
  }
  const dir = keyDir(env);
  if (store.hostKey === undefined || store.recordHostKey === undefined) {
    // A store that cannot record its key: this host's one key for such stores.
    const file = path.join(dir, HOST_KEY_FILE);
    const secret = create ? await loadOrCreateHostKey(dir) : await readKeyFile(file);
    return secret === undefined ? undefined : { secret, publicKey: await publicOf(secret), file };
  }
  const legacyFile = path.join(legacyKeyDir(store.uri, o.cwd), HOST_KEY_FILE);
  const legacy = await legacyKey(legacyFile, notice);
  let recorded = await store.hostKey();
  if (recorded === undefined) {
    if (!create) return undefined;
    const secret = legacy?.secret ?? newKey();
    const publicKey = legacy?.publicKey ?? (await publicOf(secret));
    const file = keyFileOf(dir, publicKey);
    const wrote = await writeKeyFile(file, secret);
    recorded = await store.recordHostKey(publicKey);
    // Another writer recorded its key first: a fresh key of ours was never used.
    if (recorded !== publicKey && legacy === undefined && wrote)
      await rm(file, { force: true }).catch(() => {});
  }
  const file = keyFileOf(dir, recorded);
  const secret = await readKeyFile(file);
  if (secret === undefined) {
    // A key beside the store is never taken up once the store records one: whoever can write
    // the store's folder and rows could otherwise hand this host a key of their own.
    const beside = legacy?.publicKey === recorded ? ` (${legacyFile} holds it: move it there)` : "";
    throw new WarrantError(
      "runtime/host-key-missing",
      `${store.uri} is signed with host key ${recorded}, whose private key is not in ${dir}: copy ` +
        `${path.basename(file)} there from the host that made it${beside}, or set WARRANT_KEY_DIR`,
    );
  }
  if ((await publicOf(secret)) !== recorded)
    throw new WarrantError("runtime/host-key", `${file} does not hold the key its name says`);
  if (legacy !== undefined) {
    notice(
      legacy.publicKey === recorded
        ? `${legacyFile} is a copy of this store's host key (kept in ${file}): remove it — whoever can read the store's folder can sign as this host`
        : `${legacyFile} beside the store is not its host key (${recorded}) and is ignored`,
    );
  }
  return { secret, publicKey: recorded, file };
}
