// The host key: made once beside the ledger (mode 0600), then reused; a damaged key file is refused.
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hostKeyDir, loadOrCreateHostKey } from "../../src/adapters/fs/host-key.js";

const dir = mkdtempSync(path.join(tmpdir(), "warrant-key-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the host key", () => {
  it("is kept in the SQLite file's folder, else in .warrant/", () => {
    expect(hostKeyDir("sqlite:data/ledger.db", "/srv")).toBe("/srv/data");
    expect(hostKeyDir("postgres://u@h/db", "/srv")).toBe("/srv/.warrant");
    expect(hostKeyDir("memory:", "/srv")).toBe("/srv/.warrant");
  });

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
