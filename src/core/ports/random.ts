// The randomness port: the core and the runtime never draw a random number themselves
// (test/time-ports.test.ts); `systemRandom` (src/runtime/system-random.ts) is the real one, and a
// test gives a fixed sequence instead.

/** The version of the randomness port (`Random`). */
export const RANDOM_PORT_VERSION = "v1";

/**
 * A number drawn uniformly from [0, 1). Not for secrets: what the runtime draws with it (a backoff's
 * wait, the suffix that keeps two loops opened in the same second apart) needs no more than that.
 */
export type Random = () => number;
