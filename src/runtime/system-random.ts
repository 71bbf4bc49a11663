// The system's randomness: the one place in src/runtime and src/core that draws a random number
// (test/time-ports.test.ts scans for any other). Everything else is given a `Random` port.
import type { Random } from "../core/ports/random.js";

export const systemRandom: Random = () => Math.random();

/** `bytes` random bytes as lower-case hex, drawn from `random`. */
export function randomHex(random: Random, bytes: number): string {
  let out = "";
  for (let i = 0; i < bytes; i++) {
    out += Math.floor(random() * 256)
      .toString(16)
      .padStart(2, "0");
  }
  return out;
}
