// Provider failures as WarrantErrors with `model/…` codes. Messages pass through `redact` so that a
// key echoed by a server (some echo part or all of a bad key) never reaches a log or a record.

import { WarrantError } from "../../core/result.js";

/** Replaces every secret, and anything shaped like a bearer credential, with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join("[redacted]");
  return out.replace(/\b(Bearer|x-api-key:?)\s+\S+/gi, "$1 [redacted]");
}

/** The shape both SDKs give their errors (APIError and its subclasses). */
interface SdkError {
  readonly name?: string;
  readonly status?: number;
  readonly message?: string;
}

export function codeForStatus(status: number): string {
  if (status === 401 || status === 403) return "model/auth";
  if (status === 429) return "model/rate-limited";
  if (status === 400 || status === 404 || status === 422) return "model/bad-request";
  if (status >= 500) return "model/unavailable";
  return "model/http-error";
}

/**
 * Maps an SDK failure (after the SDK's own retries) to a WarrantError. `kind` distinguishes the
 * SDK's abort / timeout / connection classes, which both SDKs name alike.
 */
export function providerError(
  providerId: string,
  error: unknown,
  secrets: readonly string[],
): WarrantError {
  const e = (typeof error === "object" && error !== null ? error : {}) as SdkError;
  // The SDKs leave `name` as "Error"; their class names tell abort, timeout and connection apart.
  const name = `${(error as { constructor?: { name?: string } } | null)?.constructor?.name ?? ""} ${e.name ?? ""}`;
  const text = redact(e.message ?? String(error), secrets);
  if (name.includes("UserAbortError")) {
    return new WarrantError("model/aborted", `${providerId}: the call was cancelled`);
  }
  if (name.includes("ConnectionTimeoutError")) {
    return new WarrantError("model/timeout", `${providerId}: the call timed out`);
  }
  if (name.includes("ConnectionError")) {
    return new WarrantError("model/unreachable", `${providerId}: cannot reach the server: ${text}`);
  }
  if (typeof e.status === "number") {
    return new WarrantError(codeForStatus(e.status), `${providerId}: HTTP ${e.status}: ${text}`);
  }
  return new WarrantError("model/failed", `${providerId}: ${text}`);
}
