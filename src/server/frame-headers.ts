// The headers that keep every console response out of another page's frame: a page on another
// origin (another loopback port included) that framed the console could steer a click onto Approve.
// Applied to every response, whoever wrote it (the handler, or the server for a malformed request).

/** The CSP directive that forbids every ancestor frame. */
export const FRAME_ANCESTORS = "frame-ancestors 'none'";

/**
 * Sets `X-Frame-Options: DENY` and merges `frame-ancestors 'none'` into the Content-Security-Policy
 * (replacing any `frame-ancestors` directive already there, keeping the others).
 */
export function denyFraming(headers: Headers): void {
  headers.set("x-frame-options", "DENY");
  headers.set(
    "content-security-policy",
    withFrameAncestors(headers.get("content-security-policy")),
  );
}

/** A Content-Security-Policy value with `frame-ancestors 'none'` as its framing directive. */
export function withFrameAncestors(policy: string | null): string {
  const kept = (policy ?? "")
    .split(";")
    .map((d) => d.trim())
    .filter((d) => d !== "" && !/^frame-ancestors(\s|$)/i.test(d));
  return [...kept, FRAME_ANCESTORS].join("; ");
}
