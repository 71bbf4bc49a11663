// Store URIs: choosing one (flag, WARRANT_STORE, default), parsing each scheme, refusing unknown
// ones, creating the SQLite folder (or refusing to, as asked), and never showing a password.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import {
  assertStoreExists,
  DEFAULT_STORE_URI,
  openStore,
  redactStoreUri,
  resolveStoreUri,
} from "../../src/adapters/store/open-store.js";
import { parseStoreUri } from "../../src/adapters/store/store-uri.js";
import { opened } from "../../src/testing/contracts/facts.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-open-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("resolveStoreUri", () => {
  it("takes the flag first, then WARRANT_STORE, then the default", () => {
    expect(resolveStoreUri("memory:", { WARRANT_STORE: "sqlite:x.db" })).toBe("memory:");
    expect(resolveStoreUri(undefined, { WARRANT_STORE: "sqlite:x.db" })).toBe("sqlite:x.db");
    expect(resolveStoreUri(undefined, {})).toBe("sqlite:.warrant/ledger.db");
    expect(DEFAULT_STORE_URI).toBe("sqlite:.warrant/ledger.db");
  });

  it("treats an empty flag or variable as unset", () => {
    expect(resolveStoreUri("", { WARRANT_STORE: "memory:" })).toBe("memory:");
    expect(resolveStoreUri("", { WARRANT_STORE: "" })).toBe(DEFAULT_STORE_URI);
  });
});

describe("parseStoreUri", () => {
  it("reads sqlite:PATH, with or without //", () => {
    expect(parseStoreUri("sqlite:.warrant/ledger.db")).toEqual({
      ok: true,
      value: { kind: "sqlite", uri: "sqlite:.warrant/ledger.db", path: ".warrant/ledger.db" },
    });
    expect(parseStoreUri("sqlite:///var/lib/w.db")).toMatchObject({
      ok: true,
      value: { kind: "sqlite", path: "/var/lib/w.db" },
    });
    expect(parseStoreUri("SQLITE:a.db")).toMatchObject({ ok: true, value: { path: "a.db" } });
  });

  it("reads postgres:// and postgresql://, taking the schema out of the connection string", () => {
    expect(parseStoreUri("postgresql://u@db.example:5433/ledger?schema=w1")).toEqual({
      ok: true,
      value: {
        kind: "postgres",
        uri: "postgresql://u@db.example:5433/ledger?schema=w1",
        connectionString: "postgresql://u@db.example:5433/ledger",
        schema: "w1",
      },
    });
    expect(parseStoreUri("postgres://u@h/d")).toMatchObject({
      ok: true,
      value: { kind: "postgres", connectionString: "postgres://u@h/d" },
    });
  });

  it("reads memory:", () => {
    expect(parseStoreUri("memory:")).toEqual({
      ok: true,
      value: { kind: "memory", uri: "memory:" },
    });
  });

  it.each([
    ["mysql://root:hunter2@db/x", /unknown store URI scheme "mysql:"/],
    ["ledger.db", /no scheme/],
    ["sqlite:", /needs a path/],
    ["memory:x", /exactly `memory:`/],
    ["postgres://:hunter2@/", /needs a host/],
  ])("refuses %s with store/uri-invalid and a clear message", (uri, message) => {
    const parsed = parseStoreUri(uri);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0]).toMatchObject({ code: "store/uri-invalid", message });
    expect(parsed.errors[0]?.message).not.toContain("hunter2");
  });

  it("names the supported schemes when it refuses one", () => {
    const parsed = parseStoreUri("redis://localhost");
    expect(parsed.ok || parsed.errors[0]?.message).toMatch(/sqlite:PATH.*postgres:\/\/.*memory:/);
  });
});

describe("redactStoreUri", () => {
  it("removes a password from the user-info and from query parameters", () => {
    expect(redactStoreUri("postgres://alice:pw1@h:5432/d")).toBe("postgres://alice@h:5432/d");
    expect(redactStoreUri("postgresql://alice@h/d?password=pw2&schema=s&sslpassword=pw3")).toBe(
      "postgresql://alice@h/d?schema=s",
    );
    expect(redactStoreUri("sqlite:a.db")).toBe("sqlite:a.db");
  });
});

describe("openStore", () => {
  it("opens memory: as a fresh in-memory store", async () => {
    const store = await openStore("memory:");
    expect(store).toBeInstanceOf(MemoryLedgerStore);
    expect(store.uri).toBe("memory:");
  });

  it("opens sqlite:PATH relative to cwd, creating the folders", async () => {
    const store = await openStore("sqlite:deep/er/ledger.db", { cwd: dir });
    expect(store.uri).toBe("sqlite:deep/er/ledger.db");
    await store.append({ query: "query:o", expectedLastSequence: 0, facts: [opened("query:o")] });
    await store.close();
    expect(existsSync(path.join(dir, "deep/er/ledger.db"))).toBe(true);
  });

  it("opens the default store at .warrant/ledger.db", async () => {
    const store = await openStore(resolveStoreUri(undefined, {}), { cwd: dir });
    await store.close();
    expect(existsSync(path.join(dir, ".warrant/ledger.db"))).toBe(true);
  });

  it("throws store/uri-invalid for an unknown scheme", async () => {
    await expect(openStore("mongodb://x")).rejects.toMatchObject({
      code: "store/uri-invalid",
      message: expect.stringMatching(/unknown store URI scheme "mongodb:"/),
    });
  });

  it("throws store/io when the SQLite folder cannot be made", async () => {
    writeFileSync(path.join(dir, "a-file"), "");
    await expect(openStore("sqlite:a-file/sub/ledger.db", { cwd: dir })).rejects.toMatchObject({
      code: "store/io",
    });
  });
});

/** Every path under `root`, relative, sorted: what a refused open must leave as it was. */
function tree(root: string): string[] {
  return (readdirSync(root, { recursive: true }) as string[]).sort();
}

describe("openStore's create option on a SQLite path that does not exist", () => {
  it("create: false refuses with store/not-found naming the path, and creates nothing", async () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), "warrant-nothing-"));
    onTestFinished(() => rmSync(cwd, { recursive: true, force: true }));
    const before = tree(cwd);
    for (const uri of ["sqlite:missing.db", "sqlite:no/such/folder/ledger.db"]) {
      const e = await openStore(uri, { cwd, create: false }).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toMatchObject({ code: "store/not-found" });
      expect((e as Error).message).toContain(uri);
      expect((e as Error).message).toContain(path.join(cwd, uri.slice("sqlite:".length)));
      // A default ledger in a folder above (another test's, a user's) is offered instead.
      expect((e as Error).message).toMatch(
        /warrant run` or `warrant demo` creates a store|did you mean/,
      );
    }
    const outside = path.join(dir, "absent-root-folder", "ledger.db");
    await expect(openStore(`sqlite:${outside}`, { cwd, create: false })).rejects.toMatchObject({
      code: "store/not-found",
    });
    expect(tree(cwd)).toEqual(before);
    expect(existsSync(path.join(dir, "absent-root-folder"))).toBe(false);
    expect(() => assertStoreExists("sqlite:missing.db", { cwd })).toThrow(
      expect.objectContaining({ code: "store/not-found" }),
    );
    expect(() => assertStoreExists("memory:", { cwd })).not.toThrow();
  });

  it("names the ledger a mistyped path probably meant: a similar file beside it, else the default one above", async () => {
    const root = mkdtempSync(path.join(dir, "near-"));
    const sub = path.join(root, "a", "b");
    mkdirSync(path.join(root, ".warrant"), { recursive: true });
    mkdirSync(sub, { recursive: true });
    const made = await openStore("sqlite:.warrant/ledger.db", { cwd: root });
    await made.close();
    await expect(
      openStore("sqlite:.warrant/ledger.db", { cwd: sub, create: false }),
    ).rejects.toThrow(`did you mean sqlite:${path.join(root, ".warrant/ledger.db")}?`);
    await expect(
      openStore("sqlite:.warrant/legder.db", { cwd: root, create: false }),
    ).rejects.toThrow("did you mean sqlite:.warrant/ledger.db?");
    await expect(
      openStore("sqlite:.warrant/ledger.sqlite", { cwd: root, create: false }),
    ).rejects.toThrow("did you mean sqlite:.warrant/ledger.db?");
    // Opening an existing store with create: false opens it.
    const existing = await openStore("sqlite:.warrant/ledger.db", { cwd: root, create: false });
    await existing.close();
  });

  it('create: "inside-cwd" makes folders inside the working folder only', async () => {
    const cwd = mkdtempSync(path.join(dir, "inside-"));
    const store = await openStore("sqlite:x/y/ledger.db", { cwd, create: "inside-cwd" });
    await store.close();
    expect(existsSync(path.join(cwd, "x/y/ledger.db"))).toBe(true);
    const away = path.join(dir, "elsewhere-absent", "deep", "ledger.db");
    const e = await openStore(`sqlite:${away}`, { cwd, create: "inside-cwd" }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toMatchObject({ code: "store/folder-missing" });
    expect((e as Error).message).toContain(`mkdir -p ${path.dirname(away)}`);
    expect(existsSync(path.join(dir, "elsewhere-absent"))).toBe(false);
    await expect(
      openStore("sqlite:../escape-absent/ledger.db", { cwd, create: "inside-cwd" }),
    ).rejects.toMatchObject({ code: "store/folder-missing" });
    expect(existsSync(path.join(dir, "escape-absent"))).toBe(false);
    // A folder outside that exists is given explicitly: the file is made in it.
    const given = mkdtempSync(path.join(dir, "given-"));
    const there = await openStore(`sqlite:${path.join(given, "l.db")}`, {
      cwd,
      create: "inside-cwd",
    });
    await there.close();
    expect(existsSync(path.join(given, "l.db"))).toBe(true);
  });
});

const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "open");
afterAll(() => (pg.enabled ? schemas.dropAll() : undefined));

describe.skipIf(!pg.enabled)("openStore on PostgreSQL", () => {
  it("keeps the password out of the store's uri", async () => {
    const u = new URL(schemas.uri());
    u.password = "s3cret-pw"; // trust authentication ignores it
    const store = await openStore(u.toString());
    expect(store.uri).not.toContain("s3cret-pw");
    expect(store.uri).toContain(`schema=${TestSchemas.schemaOf(u.toString())}`);
    await store.close();
  });
});
