// The defaults of a drive's lease and of a worker's shutdown, apart from the machinery that uses
// them (session.ts, worker.ts): what only needs the numbers (the library's settings, a command's
// help) does not load a drive to read them.

/** How long a driver's lease lasts unless extended (it is extended every third of it). */
export const DEFAULT_LEASE_TTL_MS = 10_000;

/** The default `--shutdown-timeout`: how long a stopping worker waits for its drives. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;
