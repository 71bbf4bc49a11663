// What every route of the console's API answers with and reads: JSON answers, refusals at the
// status the registry gives their code ({ok: false, code, message}), an act's result, and a JSON
// body read only up to its bound.
import { type HttpCode, httpStatus, httpStatusOf } from "../library/errors.js";
import type { ActResult } from "../library/operator-acts.js";
import type { ApiRefusal } from "./api.js";

export const JSON_HEADERS = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
} as const;

/** A refusal of the API, its status the registry's for its code. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: HttpCode,
    message: string,
  ) {
    super(message);
    this.status = httpStatus(code);
  }
}

export function json(value: unknown, status = 200): Response {
  return new Response(`${JSON.stringify(value, null, 2)}\n`, { status, headers: JSON_HEADERS });
}

export function refusal(status: number, code: string, message: string): Response {
  return json({ ok: false, code, message } satisfies ApiRefusal, status);
}

/** A refusal with a code of the registry's, at its status. */
export function refusalOf(code: HttpCode, message: string): Response {
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

export function actResponse(result: ActResult): Response {
  if (result.ok) return json({ ok: true, result: result.result, message: result.message });
  return json(result, actStatus(result.code));
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

/** The body as a JSON object (request/invalid otherwise). */
export async function bodyOf(request: Request): Promise<Record<string, unknown>> {
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

/** A string field of a body: non-empty when given, and given when `required`. */
export function text(body: Record<string, unknown>, field: string, required: true): string;
export function text(
  body: Record<string, unknown>,
  field: string,
  required: false,
): string | undefined;
export function text(body: Record<string, unknown>, field: string, required: boolean) {
  const v = body[field];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string" || v === "")
    throw new ApiError("request/invalid", `${field} is a non-empty string`);
  return v;
}
