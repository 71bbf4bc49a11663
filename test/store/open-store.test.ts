// Store URIs: choosing one (flag, WARRANT_STORE, default), parsing each scheme, refusing unknown
// ones, creating the SQLite folder, and never showing a password.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryLedgerStore } from "../../src/adapters/store/memory-ledger-store.js";
import {
  DEFAULT_STORE_URI,
  openStore,
  redactStoreUri,
  resolveStoreUri,
} from "../../src/adapters/store/open-store.js";
import { parseStoreUri } from "../../src/adapters/store/store-uri.js";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { opened } from "./facts.js";

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
