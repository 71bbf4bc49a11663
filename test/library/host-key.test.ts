// The host key: kept in this host's key folder, outside every store's folder (mode 0600 in a 0700
// folder), named by its public key, which the store records; reused by every later writer of the
// store; a store that recorded a key this host does not hold is refused; a key an older Warrant
// kept beside the store is copied over and warned about; a damaged key file is refused.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  configDir,
  keyDir,
  legacyKeyDir,
  loadOrCreateHostKey,
  trustedKeysFile,
} from "../../src/adapters/fs/host-key.js";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import { openStore } from "../../src/adapters/store/open-store.js";
import { base64url } from "../../src/core/records/canonical.js";
import { publicKeyOf } from "../../src/core/records/signature.js";
import { storeHostKey } from "../../src/library/store-key.js";

const dir = mkdtempSync(path.join(tmpdir(), "warrant-key-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A fresh key folder and SQLite store of their own. */
async function fresh() {
  const root = path.join(dir, `case-${++n}`);
  const keys = path.join(root, "keys");
  const data = path.join(root, "data");
  mkdirSync(data, { recursive: true });
  const uri = `sqlite:${path.join(data, "ledger.db")}`;
  const store = await openStore(uri);
  const notices: string[] = [];
  const o = { env: { WARRANT_KEY_DIR: keys }, onNotice: (m: string) => notices.push(m) };
  return { root, keys, data, uri, store, notices, o };
}

const pub = async (k: Uint8Array) => base64url(await publicKeyOf(k));

describe("where keys live", () => {
  it("in $WARRANT_KEY_DIR, else $XDG_CONFIG_HOME/warrant/keys, else ~/.config/warrant/keys", () => {
    expect(keyDir({ WARRANT_KEY_DIR: "/k", XDG_CONFIG_HOME: "/x" })).toBe("/k");
    expect(keyDir({ XDG_CONFIG_HOME: "/x" })).toBe("/x/warrant/keys");
    expect(keyDir({})).toBe(path.join(homedir(), ".config/warrant/keys"));
    // A relative XDG_CONFIG_HOME is ignored, as the XDG specification says.
    expect(configDir({ XDG_CONFIG_HOME: "rel" })).toBe(path.join(homedir(), ".config/warrant"));
    expect(trustedKeysFile({ XDG_CONFIG_HOME: "/x" })).toBe("/x/warrant/trusted-keys");
  });

  it("this test run's config folder is a temporary one, never the real home's", () => {
    expect(process.env.XDG_CONFIG_HOME?.startsWith(tmpdir())).toBe(true);
    expect(keyDir().startsWith(path.join(homedir(), ".config"))).toBe(false);
  });

  it("keys an older Warrant kept beside the store: the SQLite file's folder, else .warrant/", () => {
    expect(legacyKeyDir("sqlite:data/ledger.db", "/srv")).toBe("/srv/data");
    expect(legacyKeyDir("postgres://u@h/db", "/srv")).toBe("/srv/.warrant");
  });
});

describe("a store's host key", () => {
  it("is made on first use in the key folder (0600 in 0700), recorded by the store, then reused", async () => {
    const f = await fresh();
    const made = await storeHostKey(f.store, f.o);
    expect(made?.file).toBe(path.join(f.keys, `host-${made?.publicKey}.key`));
    expect(await f.store.hostKey?.()).toBe(made?.publicKey);
    expect(statSync(made?.file ?? "").mode & 0o777).toBe(0o600);
    expect(statSync(f.keys).mode & 0o777).toBe(0o700);
    // Nothing is written beside the store.
    expect(readdirSync(f.data).filter((x) => x.endsWith(".key"))).toEqual([]);
    const again = await storeHostKey(f.store, f.o);
    expect(again?.secret).toEqual(made?.secret);
    expect(f.notices).toEqual([]);
    await f.store.close();
  });

  it("writers starting together agree on one key, and no unused key file is left", async () => {
    const f = await fresh();
    const other = await openStore(f.uri);
    const [a, b] = await Promise.all([storeHostKey(f.store, f.o), storeHostKey(other, f.o)]);
    expect(a?.publicKey).toBe(b?.publicKey);
    expect(readdirSync(f.keys)).toEqual([`host-${a?.publicKey}.key`]);
    await Promise.all([f.store.close(), other.close()]);
  });

  it("is not made when only an existing key is asked for", async () => {
    const f = await fresh();
    expect(await storeHostKey(f.store, { ...f.o, create: false })).toBeUndefined();
    expect(existsSync(f.keys)).toBe(false);
    await f.store.close();
  });

  it("a store recorded with a key this host does not hold is refused: runtime/host-key-missing", async () => {
    const f = await fresh();
    const made = await storeHostKey(f.store, f.o);
    const elsewhere = { ...f.o, env: { WARRANT_KEY_DIR: path.join(f.root, "other-host") } };
    await expect(storeHostKey(f.store, elsewhere)).rejects.toMatchObject({
      code: "runtime/host-key-missing",
      message: expect.stringContaining(`host-${made?.publicKey}.key`),
    });
    // Not even from beside the store: a key there is named, never taken up.
    writeFileSync(path.join(f.data, "host.key"), made?.secret ?? new Uint8Array());
    await expect(storeHostKey(f.store, elsewhere)).rejects.toMatchObject({
      code: "runtime/host-key-missing",
      message: expect.stringContaining("host.key holds it: move it there"),
    });
    await f.store.close();
  });

  it("a key file that is damaged, or holds another key than its name says, is refused", async () => {
    const f = await fresh();
    const made = await storeHostKey(f.store, f.o);
    writeFileSync(made?.file ?? "", new Uint8Array(32).fill(3));
    await expect(storeHostKey(f.store, f.o)).rejects.toMatchObject({ code: "runtime/host-key" });
    writeFileSync(made?.file ?? "", "short");
    await expect(storeHostKey(f.store, f.o)).rejects.toMatchObject({ code: "runtime/host-key" });
    await f.store.close();
  });

  it("host.key an older Warrant kept beside the store is carried over, and warned about while it stays", async () => {
    const f = await fresh();
    const legacy = new Uint8Array(32).fill(4);
    writeFileSync(path.join(f.data, "host.key"), legacy, { mode: 0o600 });
    const key = await storeHostKey(f.store, f.o);
    expect(key?.secret).toEqual(legacy);
    expect(await f.store.hostKey?.()).toBe(await pub(legacy));
    expect(existsSync(path.join(f.keys, `host-${await pub(legacy)}.key`))).toBe(true);
    expect(f.notices.at(-1)).toMatch(/host\.key is a copy of this store's host key .*remove it/);
    // Once removed, the key folder's copy signs alone, without a word.
    rmSync(path.join(f.data, "host.key"));
    f.notices.length = 0;
    expect((await storeHostKey(f.store, f.o))?.secret).toEqual(legacy);
    expect(f.notices).toEqual([]);
    // Another key laid beside the store later is never taken up.
    writeFileSync(path.join(f.data, "host.key"), new Uint8Array(32).fill(7));
    expect((await storeHostKey(f.store, f.o))?.secret).toEqual(legacy);
    expect(f.notices.at(-1)).toMatch(/is not its host key .* and is ignored/);
    await f.store.close();
  });

  it("a memory store's key lives in its process only", async () => {
    const f = await fresh();
    const store = new MemoryLedgerStore();
    const a = await storeHostKey(store, f.o);
    expect(a?.file).toBeUndefined();
    expect((await storeHostKey(store, f.o))?.secret).toEqual(a?.secret);
    expect(existsSync(f.keys)).toBe(false);
    await f.store.close();
  });
});

describe("loadOrCreateHostKey (a store that cannot record its key)", () => {
  it("is created once with mode 0600 and read back the same", async () => {
    const d = path.join(dir, "a");
    const [first, second] = await Promise.all([loadOrCreateHostKey(d), loadOrCreateHostKey(d)]);
    expect(first).toHaveLength(32);
    expect(second).toEqual(first);
    expect(await loadOrCreateHostKey(d)).toEqual(first);
    expect(statSync(path.join(d, "host.key")).mode & 0o777).toBe(0o600);
  });

  it("refuses a key file of the wrong size", async () => {
    const d = path.join(dir, "b");
    await loadOrCreateHostKey(d);
    writeFileSync(path.join(d, "host.key"), "short");
    await expect(loadOrCreateHostKey(d)).rejects.toMatchObject({ code: "runtime/host-key" });
  });
});
