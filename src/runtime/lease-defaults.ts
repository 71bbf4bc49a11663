// The lease's default length, apart from the drive machinery that uses it (session.ts), so that
// what only needs the number (the library's lease settings) does not load a drive to read it.

/** How long a driver's lease lasts unless extended (it is extended every third of it). */
export const DEFAULT_LEASE_TTL_MS = 10_000;
