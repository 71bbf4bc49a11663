// RFC 3339 instants as the loop stores them: UTC with `Z`, milliseconds only when not zero.

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch of an RFC 3339 date-time, or undefined when it is not one. */
export function parseInstant(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h] = m;
  // Date.parse (ECMAScript's date-time string format) refuses a field out of its range: month 00
  // or 13, day 00 or 32, minute 60, second 60 (so no leap second). Two it accepts are refused
  // here: the hour 24 (read as the next day's midnight) and a day the month does not have
  // (2026-02-31 rolls over to March).
  if (h === "24") return undefined;
  const ms = Date.parse(text.toUpperCase());
  if (!Number.isFinite(ms)) return undefined;
  const day = Number(d);
  const probe = new Date(Date.UTC(Number(y), Number(mo) - 1, day));
  if (probe.getUTCDate() !== day) return undefined;
  return ms;
}

/** The stored spelling of an instant: `YYYY-MM-DDTHH:MM:SS[.mmm]Z`. */
export function formatInstant(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
}
