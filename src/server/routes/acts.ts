// What an operator does and sees as themself: GET /api/pending (every approval waited for),
// GET /api/session (who the token names), and the acts, recorded under that operator:
// POST /api/approvals (approve or deny a step), POST /api/loops/:query/renew, /cancel and /answer.
import { toQueryId } from "../../index.js";
import { operatorNameOf } from "../../library/operators.js";
import { ApiError, actResponse, bodyOf, json, text } from "../http.js";
import { type Route, segment, statusOf, whoOf } from "./route.js";

/** A renewal's new deadline: `extendMs` from now, or an RFC 3339 `deadline`; exactly one. */
function renewalDeadline(body: Record<string, unknown>, now: Date): Date {
  const hasDeadline = body.deadline !== undefined;
  const hasExtend = body.extendMs !== undefined;
  if (hasDeadline === hasExtend)
    throw new ApiError("request/invalid", "renew takes exactly one of deadline and extendMs");
  if (hasExtend) {
    const ms = body.extendMs;
    if (typeof ms !== "number" || !Number.isSafeInteger(ms) || ms <= 0)
      throw new ApiError("request/invalid", "extendMs is a positive integer (from now)");
    return new Date(now.getTime() + ms);
  }
  const t = Date.parse(text(body, "deadline", true));
  if (Number.isNaN(t)) throw new ApiError("request/invalid", "deadline is an RFC 3339 time");
  return new Date(t);
}

export const actRoutes: readonly Route[] = [
  { method: "GET", path: ["pending"], handle: async (c) => json(await c.views.pending(c.now())) },
  {
    method: "GET",
    path: ["session"],
    handle: async (_c, r) =>
      json({ operator: r.operator === undefined ? null : operatorNameOf(r.operator) }),
  },
  {
    method: "POST",
    path: ["approvals"],
    async handle(c, r) {
      const body = await bodyOf(r.request);
      const run = text(body, "run", true);
      const step = text(body, "step", true);
      const decision = body.decision;
      const reason = text(body, "reason", false);
      if (decision !== "approve" && decision !== "deny")
        throw new ApiError("request/invalid", 'decision is "approve" or "deny"');
      if (decision === "approve" && reason !== undefined)
        throw new ApiError("request/invalid", "a reason goes with a denial only");
      const who = whoOf(r);
      return actResponse(
        decision === "approve"
          ? await c.warrant.approve(run, step, who)
          : await c.warrant.deny(run, step, reason === undefined ? who : { ...who, reason }),
      );
    },
  },
  {
    method: "POST",
    path: ["loops", null, "renew"],
    async handle(c, r) {
      const query = segment(r, 1);
      const deadline = renewalDeadline(await bodyOf(r.request), c.now());
      await statusOf(c, query);
      return actResponse(await c.warrant.renew(toQueryId(query), deadline, whoOf(r)));
    },
  },
  {
    method: "POST",
    path: ["loops", null, "cancel"],
    async handle(c, r) {
      const query = segment(r, 1);
      await statusOf(c, query);
      return actResponse(await c.warrant.cancel(toQueryId(query), whoOf(r)));
    },
  },
  {
    method: "POST",
    path: ["loops", null, "answer"],
    async handle(c, r) {
      const query = segment(r, 1);
      const answer = text(await bodyOf(r.request), "text", true);
      await statusOf(c, query);
      return actResponse(await c.warrant.answer(toQueryId(query), answer, whoOf(r)));
    },
  },
];
