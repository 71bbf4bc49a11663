// RFC 3339 instants as the loop stores them: UTC with `Z`, milliseconds only when not zero.

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch of an RFC 3339 date-time, or undefined when it is not one. */
export function parseInstant(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return undefined;
  const ms = Date.parse(text.toUpperCase());
  if (!Number.isFinite(ms)) return undefined;
  // Date.parse rolls 2026-02-31 over to March: refuse a day the month does not have.
  const probe = new Date(Date.UTC(Number(y), month - 1, day));
  if (probe.getUTCDate() !== day) return undefined;
  return ms;
}

/** The stored spelling of an instant: `YYYY-MM-DDTHH:MM:SS[.mmm]Z`. */
export function formatInstant(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
}
