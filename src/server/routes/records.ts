// GET /api/records/:ref (a record's stored body) and GET /api/records/:ref/view (the record with
// what is stored beside it, as the page reads it: src/server/api.ts).
import type { RecordViewAnswer } from "../api.js";
import { ApiError, json } from "../http.js";
import { type Route, segment } from "./route.js";

export const recordRoutes: readonly Route[] = [
  {
    method: "GET",
    path: ["records", null, "view"],
    async handle(c, r) {
      const view = await c.views.recordView(segment(r, 1));
      if (view === undefined)
        throw new ApiError("record/not-found", `no record ${segment(r, 1)} in ${c.views.storeUri}`);
      return json(view satisfies RecordViewAnswer);
    },
  },
  {
    method: "GET",
    path: ["records", null],
    async handle(c, r) {
      const body = await c.views.recordBody(segment(r, 1));
      if (body === undefined)
        throw new ApiError("record/not-found", `no record ${segment(r, 1)} in ${c.views.storeUri}`);
      return json(body);
    },
  },
];
