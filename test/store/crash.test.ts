// A writer killed with SIGKILL at random points in a stream of charges (docs/spec/runs.md, docs/spec/storage.md): the store
// opens, every stored loop checks (chain intact, every fact legal, records present), every charge
// the writer acknowledged after its commit is there, and nothing is half-written (each charge has
// its record and no record is without its charge). The kill point is chosen by counting
// acknowledgements, so the kill lands while the writer is in the middle of its next append.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { postgresForTests, TestSchemas } from "../helpers/postgres.js";
import { killRepeatedly } from "./crash-harness.js";
import { assertBuilt } from "./writers.js";

beforeAll(assertBuilt);

describe("a writer killed mid-stream", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-crash-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("leaves a SQLite store that opens, checks and holds every acknowledged charge (20 kills)", async () => {
    await killRepeatedly(`sqlite:${path.join(dir, "crash.db")}`, 20, 30);
  });

  it("keeps group commits whole: 8 loops charged at once, killed 10 times", async () => {
    await killRepeatedly(`sqlite:${path.join(dir, "crash-group.db")}`, 10, 80, 8);
  });
});

const pg = await postgresForTests();
const schemas = new TestSchemas(pg.url, "crash");
afterAll(() => (pg.enabled ? schemas.dropAll() : undefined));

describe.skipIf(!pg.enabled)("a PostgreSQL writer killed mid-stream", () => {
  it("leaves a store that opens, checks and holds every acknowledged charge (8 kills)", async () => {
    await killRepeatedly(schemas.uri(), 8, 30);
    await killRepeatedly(schemas.uri(), 4, 60, 4);
  });
});
