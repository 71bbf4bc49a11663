// The console's HTTP API and UI as one web-standard handler, `fetch(Request) → Response`: the node
// server mounts it, tests call it without a socket. Every request passes the gates (gates.ts): the
// Host, then for /api/* the bearer token and, for a state-changing request, the Origin; then an
// asset (assets.ts) or the first route that matches (routes/*.ts). No cookie is set or read; no
// response may be framed. Answers are JSON; a refusal is {ok: false, code, message}.
import { WarrantError } from "../index.js";
import type { Warrant } from "../library/create-warrant.js";
import { operatorBindingOf } from "../library/operators.js";
import { asset } from "./assets.js";
import { createEventStreams } from "./event-streams.js";
import { denyFraming } from "./frame-headers.js";
import { bearer, changesState, foreignHost, foreignOrigin, tokenDigest } from "./gates.js";
import { ApiError, refusal, refusalOf } from "./http.js";
import { actRoutes } from "./routes/acts.js";
import { evalRoutes } from "./routes/evals.js";
import { loopRoutes } from "./routes/loops.js";
import { recordRoutes } from "./routes/records.js";
import { type ConsoleContext, matches, type Route, type RouteRequest } from "./routes/route.js";

export type { EvalRow } from "./routes/evals.js";
export type { LoopRow } from "./routes/loops.js";

export interface ConsoleOperatorToken {
  /** The operator's name (or `node-operator-binding:NAME`). */
  readonly name: string;
  readonly token: string;
}

export interface ConsoleOptions {
  readonly warrant: Warrant;
  /**
   * The one shared bearer token: acts are recorded as the runtime's operator. Ignored when
   * `operators` is given.
   */
  readonly token?: string;
  /** Each person's token: an act is recorded as the operator whose token the request carries. */
  readonly operators?: readonly ConsoleOperatorToken[];
  /** Origins a state-changing request may come from (the console's own). */
  readonly origins: readonly string[];
  /**
   * The Host values the console answers to (`NAME:PORT`, see allowed-hosts.ts); a request whose URL
   * has another host is refused with 403 `auth/foreign-host`.
   */
  readonly hosts: readonly string[];
  /** The built UI (index.html, app.js, app.css); absent: the API only. */
  readonly assetsDir?: string;
  readonly now?: () => Date;
  /** Comment lines on every event stream this often (default 15 s). */
  readonly heartbeatMs?: number;
}

export interface ConsoleHandler {
  fetch(request: Request): Promise<Response>;
  /** Ends every event stream and stops watching the store. */
  close(): Promise<void>;
}

/** Every route of the API, tried in order (their paths never overlap). */
const ROUTES: readonly Route[] = [
  ...loopRoutes,
  ...recordRoutes,
  ...actRoutes,
  ...evalRoutes,
  { method: "GET", path: ["events"], handle: (c, r) => c.events.open(r.request) },
];

/** The path's segments after /api/, each %-decoded (request/bad-escape when one cannot be). */
function segmentsOf(url: URL): string[] {
  return url.pathname
    .slice("/api/".length)
    .split("/")
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        throw new ApiError(
          "request/bad-escape",
          `${url.pathname} holds a malformed %-escape (each % starts two hex digits, and the escapes spell UTF-8)`,
        );
      }
    });
}

/** The answer of the first route that matches, or api/not-found. */
async function route(
  c: ConsoleContext,
  request: Request,
  url: URL,
  operator: string | undefined,
): Promise<Response> {
  const parts = segmentsOf(url);
  const r: RouteRequest = { request, url, parts, operator };
  for (const candidate of ROUTES)
    if (matches(candidate, request.method, parts)) return candidate.handle(c, r);
  return refusalOf("api/not-found", `${request.method} ${url.pathname} is not an API route`);
}

/** A thrown error as a refusal: the API's own at its status, a coded one as 500, else server/internal. */
function refusalFor(e: unknown): Response {
  if (e instanceof ApiError) return refusal(e.status, e.code, e.message);
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string" && code.includes("/"))
    return refusal(500, code, e instanceof Error ? e.message : String(e));
  return refusalOf("server/internal", e instanceof Error ? e.message : String(e));
}

export function createConsoleHandler(o: ConsoleOptions): ConsoleHandler {
  const { warrant } = o;
  // Each person's token, or the one shared token (its acts recorded as the runtime's operator).
  const people = o.operators ?? [];
  if (people.length === 0 && (o.token === undefined || o.token === ""))
    throw new WarrantError("server/no-token", "the console needs a token or operators' tokens");
  const bindings = people.map((p) => operatorBindingOf(p.name, "a console operator"));
  const expected =
    people.length > 0 ? people.map((p) => tokenDigest(p.token)) : [tokenDigest(o.token ?? "")];
  const now = o.now ?? (() => new Date());
  const events = createEventStreams(warrant.views, now, o.heartbeatMs ?? 15_000);
  const context: ConsoleContext = { warrant, views: warrant.views, now, events };

  const answer = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const host = foreignHost(url, o.hosts);
    if (host !== undefined) return host;
    if (!url.pathname.startsWith("/api/")) {
      if (changesState(request)) return new Response("method not allowed\n", { status: 405 });
      return asset(url.pathname, o.assetsDir);
    }
    const owner = bearer(request, expected);
    if (owner instanceof Response) return owner;
    const origin = foreignOrigin(request, o.origins);
    if (origin !== undefined) return origin;
    try {
      return await route(context, request, url, bindings[owner]);
    } catch (e) {
      return refusalFor(e);
    }
  };

  return {
    async fetch(request) {
      const response = await answer(request);
      denyFraming(response.headers);
      return response;
    },
    close: () => events.close(),
  };
}
