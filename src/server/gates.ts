// The checks every request passes before a route sees it, in this order: the Host (a request for
// another Host than the console's own is refused, 403 `auth/foreign-host`, whatever it asks); for
// /api/*, the bearer token (compared in constant time, 401 `auth/token-required` otherwise), before
// any byte of the body is read; and for a state-changing request, the Origin (a foreign one is
// refused, 403 `auth/foreign-origin`). Each answers the refusal, or undefined to let it through.
import { createHash, timingSafeEqual } from "node:crypto";
import { httpStatus } from "../library/errors.js";
import { normalizeHost } from "./allowed-hosts.js";
import { JSON_HEADERS, refusalOf } from "./http.js";

/** The refusal of a request whose URL names a Host the console does not answer to. */
export function foreignHost(url: URL, hosts: readonly string[]): Response | undefined {
  const allowed = new Set(hosts.map((h) => normalizeHost(h) ?? h));
  if (allowed.has(url.host)) return undefined;
  return refusalOf(
    "auth/foreign-host",
    `this console does not answer to Host ${url.host}: it answers to ${hosts.join(", ")} (warrant serve --allow-host NAME adds one)`,
  );
}

/** A token's digest: what the bearer gate keeps and compares. */
export const tokenDigest = (token: string): Buffer => createHash("sha256").update(token).digest();

/**
 * Who a token belongs to: the index of the matching entry, or -1. Equal-length digests compared in
 * constant time, every entry every time: neither the token's length nor which entry matched leaks.
 */
export function tokenOwner(given: string, expected: readonly Buffer[]): number {
  const a = tokenDigest(given);
  let owner = -1;
  expected.forEach((b, i) => {
    if (timingSafeEqual(a, b) && owner < 0) owner = i;
  });
  return owner;
}

/**
 * The bearer gate: the index of the token's owner among `expected` (digests), or the 401 refusal.
 * The scheme is case-insensitive (RFC 9110 §11.1); the token is compared as given.
 */
export function bearer(request: Request, expected: readonly Buffer[]): number | Response {
  const auth = request.headers.get("authorization") ?? "";
  const m = /^Bearer +(\S+)$/i.exec(auth);
  const owner = m === null ? -1 : tokenOwner(m[1] as string, expected);
  if (owner >= 0) return owner;
  return new Response(
    `${JSON.stringify({ ok: false, code: "auth/token-required", message: "this API needs Authorization: Bearer TOKEN (the token of the console URL)" })}\n`,
    {
      status: httpStatus("auth/token-required"),
      headers: { ...JSON_HEADERS, "www-authenticate": 'Bearer realm="warrant"' },
    },
  );
}

/** Whether a request may change state (anything but GET and HEAD). */
export const changesState = (request: Request): boolean =>
  request.method !== "GET" && request.method !== "HEAD";

/** The refusal of a state-changing request from an Origin not among `origins`. */
export function foreignOrigin(request: Request, origins: readonly string[]): Response | undefined {
  if (!changesState(request)) return undefined;
  const origin = request.headers.get("origin");
  if (origin === null || origins.includes(origin)) return undefined;
  return refusalOf("auth/foreign-origin", `requests from ${origin} may not change state`);
}
