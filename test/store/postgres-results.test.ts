// The results of a simple query: pg answers an array for several statements, one result for one.
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { statementResults } from "../../src/adapters/store/postgres-results.js";

const result = (command: string): pg.QueryResult => ({
  command,
  rowCount: 0,
  oid: 0,
  fields: [],
  rows: [],
});

describe("statementResults", () => {
  it("keeps the results of several statements, in order", () => {
    const answer = [result("BEGIN"), result("SET"), result("SELECT")];
    expect(statementResults(answer).map((r) => r.command)).toEqual(["BEGIN", "SET", "SELECT"]);
  });

  it("gives the result of one statement as a list of one", () => {
    expect(statementResults(result("SELECT")).map((r) => r.command)).toEqual(["SELECT"]);
  });
});
