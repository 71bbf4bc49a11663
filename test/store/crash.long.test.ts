// The crash test at soak length (`npm run test:long`): 200 SIGKILLs on SQLite (and 50 more with 8
// loops group-committed at once), 50 on PostgreSQL, kill points up to 200 acknowledgements in.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { killRepeatedly } from "./crash-harness.js";
import { assertBuilt } from "./writers.js";

beforeAll(assertBuilt);

describe("a writer killed mid-stream, many times", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-crash-long-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("SQLite: 200 kills", { timeout: 600_000 }, async () => {
    await killRepeatedly(`sqlite:${path.join(dir, "crash.db")}`, 200, 200);
  });

  it("SQLite: 50 kills of 8 loops charged at once (group commits)", {
    timeout: 600_000,
  }, async () => {
    await killRepeatedly(`sqlite:${path.join(dir, "crash-group.db")}`, 50, 400, 8);
  });
});

const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "crash_long");
afterAll(() => (pg.enabled ? schemas.dropAll() : undefined));

describe.skipIf(!pg.enabled)("a PostgreSQL writer killed mid-stream, many times", () => {
  it("PostgreSQL: 50 kills", { timeout: 600_000 }, async () => {
    await killRepeatedly(schemas.uri(), 50, 200);
  });
});
