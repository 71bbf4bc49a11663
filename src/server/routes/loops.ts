// GET /api/loops (filtered by state and waiting reason), GET /api/loops/:query (a loop's document,
// records, pending approvals, usage and conclusion), its approval card and its verified change.
import { type LoopDocument, WarrantError } from "../../index.js";
import { httpStatusOf } from "../../library/errors.js";
import { loopUsage } from "../../library/loop-usage.js";
import type { Waiting } from "../../library/pending.js";
import { ApiError, json, refusal } from "../http.js";
import { type ConsoleContext, type Route, segment, statusOf } from "./route.js";

export interface LoopRow {
  readonly query: string;
  readonly task: string;
  readonly state: LoopDocument["state"];
  readonly stop?: LoopDocument["stop"];
  readonly waiting?: Waiting;
  readonly spent: LoopDocument["spent"];
  readonly limits: LoopDocument["limits"];
  readonly deadline: string;
  readonly updatedAt: string;
}

const STATES = new Set(["open", "deadline-passed", "stopped"]);
const WAITING = new Set(["approval", "answer", "budget", "deadline", "any", "none"]);

async function loopRows(c: ConsoleContext): Promise<LoopRow[]> {
  const rows: LoopRow[] = [];
  for (const s of await c.views.statuses(c.now())) {
    const d = s.document;
    rows.push({
      query: s.query,
      task: s.task ?? d["binding/ref"],
      state: d.state,
      ...(d.stop === undefined ? {} : { stop: d.stop }),
      ...(s.waiting === undefined ? {} : { waiting: s.waiting }),
      spent: d.spent,
      limits: d.limits,
      deadline: d.deadline,
      updatedAt: d.facts.at(-1)?.["recorded-at"] ?? "",
    });
  }
  return rows;
}

/** Whether a row waits as the `waiting` filter asks (any, none, or one reason). */
function waitsAs(row: LoopRow, waiting: string): boolean {
  if (waiting === "any") return row.waiting !== undefined;
  if (waiting === "none") return row.waiting === undefined;
  return row.waiting?.reason === waiting;
}

export const loopRoutes: readonly Route[] = [
  {
    method: "GET",
    path: ["loops"],
    async handle(c, { url }) {
      const state = url.searchParams.get("state");
      const waiting = url.searchParams.get("waiting");
      if (state !== null && !STATES.has(state))
        throw new ApiError("request/invalid", `state is one of ${[...STATES].join(", ")}`);
      if (waiting !== null && !WAITING.has(waiting))
        throw new ApiError("request/invalid", `waiting is one of ${[...WAITING].join(", ")}`);
      const rows = (await loopRows(c)).filter(
        (r) => (state === null || r.state === state) && (waiting === null || waitsAs(r, waiting)),
      );
      return json(rows);
    },
  },
  {
    method: "GET",
    path: ["loops", null],
    async handle(c, r) {
      const query = segment(r, 1);
      const s = await statusOf(c, query);
      const [records, conclusion] = await Promise.all([
        c.views.records(query),
        c.views.conclusion(query),
      ]);
      return json({
        loop: s.document,
        records: records.map((x) => ({ ref: x.ref, kind: x.kind })),
        pending: s.pending,
        ...(s.waiting === undefined ? {} : { waiting: s.waiting }),
        usage: loopUsage(records),
        ...(conclusion.result === undefined ? {} : { result: conclusion.result }),
        decisions: conclusion.decisions,
      });
    },
  },
  {
    method: "GET",
    path: ["loops", null, "approval"],
    async handle(c, r) {
      const query = segment(r, 1);
      const run = r.url.searchParams.get("run");
      const context = await c.views.approvalContext(query, run ?? undefined, c.now());
      if (context === undefined)
        throw new ApiError("loop/not-opened", `no loop ${query} in ${c.views.storeUri}`);
      if (run !== null && context.run !== run)
        throw new ApiError("loop/run-missing", `${query} has no run ${run}`);
      return json(context);
    },
  },
  {
    method: "GET",
    path: ["loops", null, "diff"],
    async handle(c, r) {
      const run = r.url.searchParams.get("run");
      try {
        return json(await c.views.change(segment(r, 1), run === null ? {} : { run }));
      } catch (e) {
        if (!(e instanceof WarrantError)) throw e;
        return refusal(httpStatusOf(e.code) ?? 409, e.code, e.message);
      }
    },
  },
];
