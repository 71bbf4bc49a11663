// A route of the console's API: its method, its path after /api/ (a null segment matches any one,
// decoded), and what it answers given the console's context and the request. The routes live one
// file per resource beside this one; console-handler.ts tries them in order.
import type { Warrant } from "../../library/create-warrant.js";
import type { LoopStatus } from "../../library/pending.js";
import type { WarrantViews } from "../../library/views.js";
import type { EventStreams } from "../event-streams.js";
import { ApiError } from "../http.js";

/** What every route reads through: the runtime's façade, its views, the clock, the event streams. */
export interface ConsoleContext {
  readonly warrant: Warrant;
  readonly views: WarrantViews;
  readonly now: () => Date;
  readonly events: EventStreams;
}

export interface RouteRequest {
  readonly request: Request;
  readonly url: URL;
  /** The path's segments after /api/, decoded. */
  readonly parts: readonly string[];
  /** The operator the request's token names; undefined with the shared token. */
  readonly operator: string | undefined;
}

export interface Route {
  readonly method: "GET" | "POST";
  /** The path after /api/, one entry a segment; null matches any one segment. */
  readonly path: readonly (string | null)[];
  handle(c: ConsoleContext, r: RouteRequest): Promise<Response>;
}

/** Whether `route` answers `method` on these segments. */
export function matches(route: Route, method: string, parts: readonly string[]): boolean {
  return (
    route.method === method &&
    parts.length === route.path.length &&
    route.path.every((s, i) => s === null || s === parts[i])
  );
}

/** The path segment at `i` (a route's shape guarantees it is there). */
export const segment = (r: RouteRequest, i: number): string => r.parts[i] as string;

/** The acting operator, as the library's acts take it (none with the shared token). */
export const whoOf = (r: RouteRequest): { operator?: string } =>
  r.operator === undefined ? {} : { operator: r.operator };

/** A loop's status now; `loop/not-opened` when the store holds no such loop. */
export async function statusOf(c: ConsoleContext, query: string): Promise<LoopStatus> {
  const s = await c.views.status(query, c.now());
  if (s === undefined)
    throw new ApiError("loop/not-opened", `no loop ${query} in ${c.views.storeUri}`);
  return s;
}
