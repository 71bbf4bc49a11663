// The results of a simple query of several statements: pg answers one result per statement, as an
// array, though its typings declare one result for every query.
import type pg from "pg";

/** One result per statement, in order: an array as given, a lone result (one statement) wrapped. */
export function statementResults(answer: pg.QueryResult | pg.QueryResult[]): pg.QueryResult[] {
  return Array.isArray(answer) ? answer : [answer];
}
