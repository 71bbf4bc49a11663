// Schema versions shared by the SQL stores: the latest version this code writes, and the refusal of
// a store written by a newer one.
import { WarrantError } from "../../core/result.js";

/** The schema version this code creates and migrates to. Versions 1 and 2 are frozen in test fixtures. */
export const LATEST_SCHEMA_VERSION = 7;

/** One versioned step: applied in order, each in the same transaction as the version bump. */
export interface Migration {
  readonly version: number;
  /** What the step adds, for docs and errors. */
  readonly summary: string;
  readonly sql: string;
}

export function versionTooNew(uri: string, found: number): WarrantError {
  return new WarrantError(
    "store/version-too-new",
    `the store ${uri} has schema version ${found}, written by a newer warrant; this warrant reads ` +
      `versions up to ${LATEST_SCHEMA_VERSION}. Upgrade warrant to open it, or choose another ` +
      "store with --store or WARRANT_STORE.",
  );
}

export function versionUnreadable(uri: string, value: unknown): WarrantError {
  return new WarrantError(
    "store/version-invalid",
    `the store ${uri} records schema version ${JSON.stringify(value)}, which is not a version number`,
  );
}

/**
 * The steps after `from`, in order; `migrations` must be numbered upwards from 1 (a number may be
 * skipped: it was never released) and end at LATEST_SCHEMA_VERSION.
 */
export function pendingMigrations(migrations: readonly Migration[], from: number): Migration[] {
  migrations.forEach((m, i) => {
    if (m.version <= (i === 0 ? 0 : (migrations[i - 1] as Migration).version))
      throw new WarrantError("internal/migrations", "migrations out of order");
  });
  if (migrations.at(-1)?.version !== LATEST_SCHEMA_VERSION) {
    throw new WarrantError("internal/migrations", "migrations do not reach the latest version");
  }
  return migrations.filter((m) => m.version > from);
}

export function parseVersion(uri: string, raw: unknown): number {
  if (raw === undefined || raw === null) return 0;
  const n = typeof raw === "number" ? raw : Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw versionUnreadable(uri, raw);
  return n;
}
