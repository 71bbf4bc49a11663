// GET /api/evals (every eval of the store with its progress) and GET /api/evals/:id (its report).
import { WarrantError } from "../../index.js";
import { ApiError, json } from "../http.js";
import { type ConsoleContext, type Route, segment } from "./route.js";

/** An eval as the console lists it: its set, and how far its cells are. */
export interface EvalRow {
  readonly eval: string;
  readonly set: { readonly name: string; readonly digest: string };
  readonly agents: readonly string[];
  readonly tasks: readonly string[];
  readonly cells: number;
  /** Cells scored or ended in error. */
  readonly done: number;
  readonly passed: number;
  readonly status: string;
}

const EVAL_ID = /^eval:[a-z0-9][a-z0-9-]{0,63}-[A-Za-z0-9_-]{16}$/;

/** Every eval of the store with its progress: cells scored or in error of all, passed. */
async function evalRows(c: ConsoleContext): Promise<EvalRow[]> {
  const rows: EvalRow[] = [];
  for (const e of await c.warrant.evals.list()) {
    const report = await c.warrant.evals.report(e.eval);
    const t = report.totals;
    rows.push({
      eval: e.eval,
      set: { name: e.set.name, digest: e.set.digest },
      agents: e.agents,
      tasks: e.tasks,
      cells: t.cells,
      done: t.scored + t.errors,
      passed: t.passed,
      status: report.status,
    });
  }
  return rows;
}

export const evalRoutes: readonly Route[] = [
  { method: "GET", path: ["evals"], handle: async (c) => json(await evalRows(c)) },
  {
    method: "GET",
    path: ["evals", null],
    async handle(c, r) {
      const id = segment(r, 1);
      // An eval's id only: a set file's path would read the server's files.
      if (!EVAL_ID.test(id))
        throw new ApiError("eval/id-invalid", "an eval id is eval:<set name>-<16 characters>");
      try {
        return json(await c.warrant.evals.report(id));
      } catch (e) {
        if (e instanceof WarrantError && e.code === "eval/not-found")
          throw new ApiError(e.code, e.message);
        throw e;
      }
    },
  },
];
