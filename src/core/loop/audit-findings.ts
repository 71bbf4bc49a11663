// What the audit's parts share: the record rows as audited, where a problem is found, and the
// findings in the order they are reported.
import type { Problem } from "../result.js";
import { problem } from "./check.js";

/** A record row, parsed when its JSON parses, with what the audit found about it. */
export interface AuditedRecord {
  readonly index: number;
  readonly ref: string;
  /** The stored kind column. */
  readonly kind: string;
  readonly body: Readonly<Record<string, unknown>> | undefined;
  /** Its ref reproduces from its body and its kind column agrees with its ref. */
  readonly sound: boolean;
  /** Signed by a key of the loop, and the signature verifies. */
  readonly signed: boolean;
}

/** Where the audit reports: the fact a problem touches, else the record row. */
export interface Located {
  readonly fact?: number;
  readonly record?: number;
}

export class Findings {
  readonly #problems: { at: Located; p: Problem; n: number }[] = [];

  add(at: Located, code: string, message: string): void {
    const path = at.fact !== undefined ? `/facts/${at.fact}` : `/records/${at.record ?? 0}`;
    this.#problems.push({ at, p: problem(code, path, message), n: this.#problems.length });
  }

  /** In the order of the facts they touch (then the records), each in the order found. */
  sorted(): Problem[] {
    const rank = (a: Located) =>
      a.fact !== undefined ? a.fact : Number.MAX_SAFE_INTEGER / 2 + (a.record ?? 0);
    return [...this.#problems].sort((a, b) => rank(a.at) - rank(b.at) || a.n - b.n).map((x) => x.p);
  }

  get size(): number {
    return this.#problems.length;
  }
}
