// The console's HTTP API and UI as one web-standard handler, `fetch(Request) → Response`: the node
// server mounts it, tests call it without a socket. A request for another Host than the console's
// own is refused (403) whatever it asks; every /api/* request carries the bearer token (compared in
// constant time; 401 otherwise), checked before any byte of its body is read; a state-changing
// request from a foreign Origin is refused (403); no cookie is set or read; no response may be
// framed. Answers are JSON; a refusal is {ok: false, code, message}.
import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { type LoopDocument, toQueryId, WarrantError } from "../index.js";
import type { Warrant } from "../library/create-warrant.js";
import { type HttpCode, httpStatus, httpStatusOf } from "../library/errors.js";
import { loopUsage } from "../library/loop-usage.js";
import type { ActResult } from "../library/operator-acts.js";
import { operatorBindingOf, operatorNameOf } from "../library/operators.js";
import type { LoopStatus, Waiting } from "../library/pending.js";
import { normalizeHost } from "./allowed-hosts.js";
import type { ApiRefusal, RecordViewAnswer } from "./api.js";
import { createEventHub, type EventHub } from "./event-hub.js";
import { denyFraming } from "./frame-headers.js";

/** A person with a token of their own: their acts are recorded under their name. */
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

const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
} as const;

/** A refusal of the API, its status the registry's for its code. */
class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: HttpCode,
    message: string,
  ) {
    super(message);
    this.status = httpStatus(code);
  }
}

function json(value: unknown, status = 200): Response {
  return new Response(`${JSON.stringify(value, null, 2)}\n`, { status, headers: JSON_HEADERS });
}

function refusal(status: number, code: string, message: string): Response {
  return json({ ok: false, code, message } satisfies ApiRefusal, status);
}

/** A refusal with a code of the registry's, at its status. */
function refusalOf(code: HttpCode, message: string): Response {
  return refusal(httpStatus(code), code, message);
}

/**
 * The HTTP status of a refused act, the registry's (src/core/codes.ts): the loop or run is unknown
 * (404), the request names it badly (a run prefix too short, malformed or ambiguous: 400), or, for
 * any code the registry gives no status, its state forbids (409).
 */
function actStatus(code: string): number {
  return httpStatusOf(code) ?? 409;
}

function actResponse(result: ActResult): Response {
  if (result.ok) return json({ ok: true, result: result.result, message: result.message });
  return json(result, actStatus(result.code));
}

const digest = (token: string) => createHash("sha256").update(token).digest();

/**
 * Who a token belongs to: the index of the matching entry, or -1. Equal-length digests compared in
 * constant time, every entry every time: neither the token's length nor which entry matched leaks.
 */
function tokenOwner(given: string, expected: readonly Buffer[]): number {
  const a = digest(given);
  let owner = -1;
  expected.forEach((b, i) => {
    if (timingSafeEqual(a, b) && owner < 0) owner = i;
  });
  return owner;
}

/** The largest request body the API reads: 1 MiB. */
const MAX_BODY_BYTES = 1024 * 1024;

function tooLarge(): ApiError {
  return new ApiError("request/too-large", `the body is over ${MAX_BODY_BYTES} bytes (1 MiB)`);
}

/**
 * The body as text, read only here (after the token and the origin were checked) and only up to
 * MAX_BODY_BYTES: a declared length past it is refused before a byte is read, a longer stream as soon
 * as it passes it.
 */
async function bodyText(request: Request): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > MAX_BODY_BYTES)
    throw tooLarge();
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function bodyOf(request: Request): Promise<Record<string, unknown>> {
  const body = await bodyText(request);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new ApiError("request/invalid", "the body is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ApiError("request/invalid", "the body is a JSON object");
  return value as Record<string, unknown>;
}

function text(body: Record<string, unknown>, field: string, required: true): string;
function text(body: Record<string, unknown>, field: string, required: false): string | undefined;
function text(body: Record<string, unknown>, field: string, required: boolean) {
  const v = body[field];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string" || v === "")
    throw new ApiError("request/invalid", `${field} is a non-empty string`);
  return v;
}

const STATES = new Set(["open", "deadline-passed", "stopped"]);
const EVAL_ID = /^eval:[a-z0-9][a-z0-9-]{0,63}-[A-Za-z0-9_-]{16}$/;
const WAITING = new Set(["approval", "answer", "budget", "deadline", "any", "none"]);
const ASSETS: Readonly<Record<string, string>> = {
  "/": "index.html",
  "/index.html": "index.html",
  "/app.js": "app.js",
  "/app.css": "app.css",
};
const ASSET_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

export function createConsoleHandler(o: ConsoleOptions): ConsoleHandler {
  const { warrant } = o;
  const views = warrant.views;
  // Each person's token, or the one shared token (its acts recorded as the runtime's operator).
  const people = o.operators ?? [];
  if (people.length === 0 && (o.token === undefined || o.token === ""))
    throw new WarrantError("server/no-token", "the console needs a token or operators' tokens");
  const bindings = people.map((p) => operatorBindingOf(p.name, "a console operator"));
  const expected = people.length > 0 ? people.map((p) => digest(p.token)) : [digest(o.token ?? "")];
  const now = o.now ?? (() => new Date());
  const heartbeatMs = o.heartbeatMs ?? 15_000;
  const feed = views.watch();
  let hub: EventHub | undefined;
  const streams = new Set<() => void>();

  const status = async (query: string): Promise<LoopStatus> => {
    const s = await views.status(query, now());
    if (s === undefined)
      throw new ApiError("loop/not-opened", `no loop ${query} in ${views.storeUri}`);
    return s;
  };

  /** Every eval of the store with its progress: cells scored or in error of all, passed. */
  const evalRows = async (): Promise<EvalRow[]> => {
    const rows: EvalRow[] = [];
    for (const e of await warrant.evals.list()) {
      const report = await warrant.evals.report(e.eval);
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
  };

  const loopRows = async (): Promise<LoopRow[]> => {
    const rows: LoopRow[] = [];
    for (const s of await views.statuses(now())) {
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
  };

  const events = async (request: Request): Promise<Response> => {
    if (feed === undefined)
      throw new ApiError("store/no-change-feed", `${views.storeUri} keeps no change feed`);
    hub ??= createEventHub(feed, () => views.pending(now()));
    const h = hub;
    const header = request.headers.get("last-event-id");
    let from: number;
    if (header === null || header === "") from = await h.lastPosition();
    else if (/^\d{1,15}$/.test(header)) from = Number(header);
    else throw new ApiError("request/invalid", "Last-Event-ID is a position (an integer)");
    const encoder = new TextEncoder();
    let stop: (() => void) | undefined;
    let beat: NodeJS.Timeout | undefined;
    let end: () => void = () => {};
    const body = new ReadableStream<Uint8Array>({
      start: async (controller) => {
        const send = (t: string) => {
          try {
            controller.enqueue(encoder.encode(t));
          } catch {
            end();
          }
        };
        end = () => {
          stop?.();
          if (beat !== undefined) clearInterval(beat);
          streams.delete(end);
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        };
        streams.add(end);
        // Where this stream starts: a client without Last-Event-ID resumes from here.
        send(
          `retry: 2000\nid: ${from}\nevent: ready\ndata: ${JSON.stringify({ position: from })}\n\n`,
        );
        stop = await h.subscribe(from, {
          fact: (f) =>
            send(
              `id: ${f.position}\nevent: fact\ndata: ${JSON.stringify({
                position: f.position,
                query: f.query,
                sequence: f.fact.sequence,
                kind: f.fact.step.kind,
                recordedAt: f.fact["recorded-at"],
                fact: f.fact,
              })}\n\n`,
            ),
          pending: (list) => send(`event: pending\ndata: ${JSON.stringify(list)}\n\n`),
        });
        beat = setInterval(() => send(": heartbeat\n\n"), heartbeatMs);
        beat.unref();
        request.signal.addEventListener("abort", () => end());
      },
      cancel: () => end(),
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  };

  const api = async (
    request: Request,
    url: URL,
    /** The operator the request's token names; undefined with the shared token. */
    operator: string | undefined,
  ): Promise<Response> => {
    const who = operator === undefined ? {} : { operator };
    const parts = url.pathname
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
    const method = request.method;
    const route = (m: string, ...shape: (string | null)[]) =>
      method === m &&
      parts.length === shape.length &&
      shape.every((s, i) => s === null || s === parts[i]);
    const at = (i: number) => parts[i] as string;

    if (route("GET", "loops")) {
      const state = url.searchParams.get("state");
      const waiting = url.searchParams.get("waiting");
      if (state !== null && !STATES.has(state))
        throw new ApiError("request/invalid", `state is one of ${[...STATES].join(", ")}`);
      if (waiting !== null && !WAITING.has(waiting))
        throw new ApiError("request/invalid", `waiting is one of ${[...WAITING].join(", ")}`);
      const rows = (await loopRows()).filter(
        (r) =>
          (state === null || r.state === state) &&
          (waiting === null ||
            (waiting === "any"
              ? r.waiting !== undefined
              : waiting === "none"
                ? r.waiting === undefined
                : r.waiting?.reason === waiting)),
      );
      return json(rows);
    }
    if (route("GET", "loops", null)) {
      const query = at(1);
      const s = await status(query);
      const [records, conclusion] = await Promise.all([
        views.records(query),
        views.conclusion(query),
      ]);
      return json({
        loop: s.document,
        records: records.map((r) => ({ ref: r.ref, kind: r.kind })),
        pending: s.pending,
        ...(s.waiting === undefined ? {} : { waiting: s.waiting }),
        usage: loopUsage(records),
        ...(conclusion.result === undefined ? {} : { result: conclusion.result }),
        decisions: conclusion.decisions,
      });
    }
    if (route("GET", "loops", null, "approval")) {
      const run = url.searchParams.get("run");
      const context = await views.approvalContext(at(1), run ?? undefined, now());
      if (context === undefined)
        throw new ApiError("loop/not-opened", `no loop ${at(1)} in ${views.storeUri}`);
      if (run !== null && context.run !== run)
        throw new ApiError("loop/run-missing", `${at(1)} has no run ${run}`);
      return json(context);
    }
    if (route("GET", "loops", null, "diff")) {
      const run = url.searchParams.get("run");
      try {
        return json(await views.change(at(1), run === null ? {} : { run }));
      } catch (e) {
        if (!(e instanceof WarrantError)) throw e;
        return refusal(httpStatusOf(e.code) ?? 409, e.code, e.message);
      }
    }
    if (route("GET", "records", null, "view")) {
      const view = await views.recordView(at(1));
      if (view === undefined)
        throw new ApiError("record/not-found", `no record ${at(1)} in ${views.storeUri}`);
      return json(view satisfies RecordViewAnswer);
    }
    if (route("GET", "records", null)) {
      const body = await views.recordBody(at(1));
      if (body === undefined)
        throw new ApiError("record/not-found", `no record ${at(1)} in ${views.storeUri}`);
      return json(body);
    }
    if (route("GET", "pending")) return json(await views.pending(now()));
    if (route("GET", "session"))
      return json({ operator: operator === undefined ? null : operatorNameOf(operator) });
    if (route("GET", "evals")) return json(await evalRows());
    if (route("GET", "evals", null)) {
      const id = at(1);
      // An eval's id only: a set file's path would read the server's files.
      if (!EVAL_ID.test(id))
        throw new ApiError("eval/id-invalid", "an eval id is eval:<set name>-<16 characters>");
      try {
        return json(await warrant.evals.report(id));
      } catch (e) {
        if (e instanceof WarrantError && e.code === "eval/not-found")
          throw new ApiError(e.code, e.message);
        throw e;
      }
    }
    if (route("GET", "events")) return events(request);
    if (route("POST", "approvals")) {
      const body = await bodyOf(request);
      const run = text(body, "run", true);
      const step = text(body, "step", true);
      const decision = body.decision;
      const reason = text(body, "reason", false);
      if (decision !== "approve" && decision !== "deny")
        throw new ApiError("request/invalid", 'decision is "approve" or "deny"');
      if (decision === "approve" && reason !== undefined)
        throw new ApiError("request/invalid", "a reason goes with a denial only");
      return actResponse(
        decision === "approve"
          ? await warrant.approve(run, step, who)
          : await warrant.deny(run, step, reason === undefined ? who : { ...who, reason }),
      );
    }
    if (route("POST", "loops", null, "renew")) {
      const query = at(1);
      const body = await bodyOf(request);
      const hasDeadline = body.deadline !== undefined;
      const hasExtend = body.extendMs !== undefined;
      if (hasDeadline === hasExtend)
        throw new ApiError("request/invalid", "renew takes exactly one of deadline and extendMs");
      let deadline: Date;
      if (hasExtend) {
        const ms = body.extendMs;
        if (typeof ms !== "number" || !Number.isSafeInteger(ms) || ms <= 0)
          throw new ApiError("request/invalid", "extendMs is a positive integer (from now)");
        deadline = new Date(now().getTime() + ms);
      } else {
        const t = Date.parse(text(body, "deadline", true));
        if (Number.isNaN(t)) throw new ApiError("request/invalid", "deadline is an RFC 3339 time");
        deadline = new Date(t);
      }
      await status(query);
      return actResponse(await warrant.renew(toQueryId(query), deadline, who));
    }
    if (route("POST", "loops", null, "cancel")) {
      const query = at(1);
      await status(query);
      return actResponse(await warrant.cancel(toQueryId(query), who));
    }
    if (route("POST", "loops", null, "answer")) {
      const query = at(1);
      const answer = text(await bodyOf(request), "text", true);
      await status(query);
      return actResponse(await warrant.answer(toQueryId(query), answer, who));
    }
    return refusalOf("api/not-found", `${method} ${url.pathname} is not an API route`);
  };

  const asset = async (pathname: string): Promise<Response> => {
    const name = ASSETS[pathname];
    if (name === undefined || o.assetsDir === undefined)
      return new Response("not found\n", {
        status: 404,
        headers: { "content-type": "text/plain" },
      });
    try {
      const content = await readFile(path.join(o.assetsDir, name));
      return new Response(content, {
        headers: {
          "content-type": ASSET_TYPES[path.extname(name)] ?? "application/octet-stream",
          "cache-control": "no-cache",
          "x-content-type-options": "nosniff",
          "content-security-policy":
            "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
          "referrer-policy": "no-referrer",
        },
      });
    } catch {
      return new Response("the console UI is not built (npm run build)\n", {
        status: 404,
        headers: { "content-type": "text/plain" },
      });
    }
  };

  const hostAllowed = (url: URL): boolean => {
    const allowed = new Set(o.hosts.map((h) => normalizeHost(h) ?? h));
    return allowed.has(url.host);
  };

  const answer = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (!hostAllowed(url))
      return refusalOf(
        "auth/foreign-host",
        `this console does not answer to Host ${url.host}: it answers to ${o.hosts.join(", ")} (warrant serve --allow-host NAME adds one)`,
      );
    if (!url.pathname.startsWith("/api/")) {
      if (request.method !== "GET" && request.method !== "HEAD")
        return new Response("method not allowed\n", { status: 405 });
      return asset(url.pathname);
    }
    // The scheme is case-insensitive (RFC 9110 §11.1); the token is compared as given.
    const auth = request.headers.get("authorization") ?? "";
    const m = /^Bearer +(\S+)$/i.exec(auth);
    const owner = m === null ? -1 : tokenOwner(m[1] as string, expected);
    if (owner < 0)
      return new Response(
        `${JSON.stringify({ ok: false, code: "auth/token-required", message: "this API needs Authorization: Bearer TOKEN (the token of the console URL)" })}\n`,
        {
          status: httpStatus("auth/token-required"),
          headers: { ...JSON_HEADERS, "www-authenticate": 'Bearer realm="warrant"' },
        },
      );
    if (request.method !== "GET" && request.method !== "HEAD") {
      const origin = request.headers.get("origin");
      if (origin !== null && !o.origins.includes(origin))
        return refusalOf("auth/foreign-origin", `requests from ${origin} may not change state`);
    }
    try {
      return await api(request, url, bindings[owner]);
    } catch (e) {
      if (e instanceof ApiError) return refusal(e.status, e.code, e.message);
      const code = (e as { code?: unknown }).code;
      if (typeof code === "string" && code.includes("/"))
        return refusal(500, code, e instanceof Error ? e.message : String(e));
      return refusalOf("server/internal", e instanceof Error ? e.message : String(e));
    }
  };

  return {
    async fetch(request) {
      const response = await answer(request);
      denyFraming(response.headers);
      return response;
    },
    async close() {
      for (const end of [...streams]) end();
      await hub?.close();
    },
  };
}
